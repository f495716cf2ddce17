package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Every duration in an answer is a string: an agent's review_timeout is
// written as a Go duration; records stored by older versions, with
// integer nanoseconds, still load.
func TestAgentReviewTimeoutJSON(t *testing.T) {
	a := Agent{ID: "agt_x", Tenant: "acme", Member: "u-1", ReviewTimeout: 90 * time.Second}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"review_timeout":"1m30s"`) || strings.Count(string(b), "review_timeout") != 1 {
		t.Fatalf("marshalled %s", b)
	}
	for _, stored := range []string{
		`{"id":"agt_x","tenant":"acme","member":"u-1","review_timeout":90000000000}`, // older versions
		`{"id":"agt_x","tenant":"acme","member":"u-1","review_timeout":"1m30s"}`,
	} {
		var got Agent
		if err := json.Unmarshal([]byte(stored), &got); err != nil {
			t.Fatalf("%s: %v", stored, err)
		}
		if got.ReviewTimeout != 90*time.Second || got.ID != "agt_x" || got.Member != "u-1" {
			t.Errorf("%s loaded as %+v", stored, got)
		}
	}
	var none Agent
	if b, _ := json.Marshal(Agent{ID: "agt_y"}); strings.Contains(string(b), "review_timeout") {
		t.Errorf("no timeout marshalled %s", b)
	}
	if err := json.Unmarshal([]byte(`{"id":"agt_y","review_timeout":"soon"}`), &none); err == nil {
		t.Error("a review_timeout that is no duration loaded")
	}
}
