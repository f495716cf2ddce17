package mcpproxy

import "errors"

// ErrNoGate: Connect was given a Config without a Gate.
var ErrNoGate = errors.New("mcpproxy: no gate configured")

// ErrBadConnection: Config.Connection is not a configured id
// ([A-Za-z0-9_-]{1,64}).
var ErrBadConnection = errors.New("mcpproxy: connection id must match [A-Za-z0-9_-]{1,64}")
