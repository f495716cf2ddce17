// Package mcpproxy is an MCP server that stands in front of an upstream MCP
// server and gates every tools/call through countersign.
//
// The proxy re-exports the upstream's tools under the same names, with the
// same descriptions, schemas and annotations, and one optional argument
// added to each input schema: countersign_reason (a string). A call is
// submitted through the adapter as the capability tools.call:<tool name>,
// with the arguments minus countersign_reason, that reason as the request's
// reason, and the session of the proxy (Config.Session, else the downstream
// MCP session id, else one fresh id per proxy). The call is forwarded
// upstream with exactly the arguments that were approved, and only after
// the approval was claimed (adapter.Ran); when a person approved it with
// edits (SPEC §5), with the edited arguments instead. Any other outcome — denied,
// expired, approval expired, cancelled, could not be obtained — comes back
// as a tool result with isError set and the outcome's wording as its text;
// the upstream server never sees the call.
//
// With Config.Connection the upstream is an app connection: calls are
// submitted as apps.call:<connection>/<tool>, bound to connection {id,
// revision}, where the revision is derived from the connection id, the
// upstream's configuration and its tool list (Proxy.Revision), so a changed
// upstream never reuses a decision made for the old one.
//
// The upstream's own annotations (readOnlyHint, destructiveHint, …) are
// passed through for display and never gate anything: only the tenant's
// read_rules make a call a read, on the server.
//
// Resources, resource templates and prompts pass through ungated, as reads.
// The proxy follows the upstream's list-changed notifications.
package mcpproxy
