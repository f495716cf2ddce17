package outbox

import "errors"

// ErrConfig: New was given a config it cannot run with.
var ErrConfig = errors.New("outbox: bad config")
