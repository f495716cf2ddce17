package mcpproxy

import "errors"

// ErrNoGate: Connect was given a Config without a Gate.
var ErrNoGate = errors.New("mcpproxy: no gate configured")
