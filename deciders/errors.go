package deciders

import "errors"

// ErrConfig: a constructor was given a config it cannot run with.
var ErrConfig = errors.New("deciders: bad config")
