// Package replay shows what a candidate config would have done (SPEC §16):
// it reads a tenant's audit log, rebuilds from it the agents, grants and
// kept rules in force when each request of a window was created, and runs
// each request, as it stood then, through the candidate's check order with
// approvals.Decide, the function Submit calls. The judge is not called: a
// request that reaches the rules is "judge", unless its recorded judge
// outcome quoted a rule the candidate keeps word for word.
//
// Run reads the log twice through a Source (first the history, then the
// window's requests), so that a grant the log happens to hold after a
// request made later still counts as in force; it holds the history, never
// the requests, in memory. It writes nothing.
package replay
