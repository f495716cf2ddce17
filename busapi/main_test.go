package busapi_test

import (
	"github.com/countersign/countersign/domain"
)

func idOf(s string) domain.RequestID { return domain.RequestID(s) }
