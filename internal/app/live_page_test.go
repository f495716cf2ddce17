package app_test

import (
	"strings"
	"testing"

	"github.com/countersign/countersign/internal/testkit/servertest"
)

// TestViewPageOnAnotherProcess: view/page on one API process reads the
// session's log of changes made through another one (the log is the
// requests stream in JetStream, not a process's memory).
func TestViewPageOnAnotherProcess(t *testing.T) {
	url := startExternalNATS(t)
	api1, api2 := startRole(t, url, "api"), startRole(t, url, "api")
	main1, person1 := newClient("http://"+api1.Addr(), "dev-main"), newClient("http://"+api1.Addr(), "dev-person")
	var a, b record
	if code := main1.do(t, "POST", "/v1/requests", map[string]any{"tool": "a", "session": "ses-x", "timeout": "1h", "arguments": map[string]any{}}, nil, &a); code != 201 {
		t.Fatalf("submit a on api1: %d", code)
	}
	if code := person1.do(t, "POST", "/v1/requests/"+a.ID, map[string]any{"expected": 0, "decision": "deny"}, nil, nil); code != 200 {
		t.Fatalf("deny a on api1: %d", code)
	}
	if code := main1.do(t, "POST", "/v1/requests", map[string]any{"tool": "b", "session": "ses-x", "timeout": "1h", "arguments": map[string]any{}}, nil, &b); code != 201 {
		t.Fatalf("submit b on api1: %d", code)
	}
	res := servertest.API{T: t, URL: "http://" + api2.Addr()}.DialRPC("dev-person").Call("view/page", map[string]any{"cursor": a.ID + ":0"})
	var got []string
	list, _ := res["events"].([]any)
	for _, e := range list {
		ev := e.(map[string]any)
		got = append(got, ev["method"].(string)+" "+ev["params"].(map[string]any)["approvalId"].(string))
	}
	want := []string{"approval/requested " + a.ID, "approval/resolved " + a.ID, "approval/requested " + b.ID}
	if strings.Join(got, ",") != strings.Join(want, ",") || res["nextCursor"] != "" {
		t.Errorf("view/page on api2: %v next %v, want %v", got, res["nextCursor"], want)
	}
}
