package busapi_test

import "github.com/countersign/countersign/events"

func idOf(s string) events.RequestID { return events.RequestID(s) }
