package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestMainHelpAndUsage(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		stdout     bool // the usage goes to stdout (asked for) or stderr (a mistake)
		wantInText string
	}{
		{[]string{"--help"}, 0, true, "usage: countersign <command>"},
		{[]string{"-help"}, 0, true, "usage: countersign <command>"},
		{[]string{"-h"}, 0, true, "usage: countersign <command>"},
		{[]string{"help"}, 0, true, "usage: countersign <command>"},
		{[]string{"help", "deny"}, 0, false, ""}, // the command prints its own usage
		{[]string{"help", "nosuch"}, 2, false, `unknown command "nosuch"`},
		{nil, 2, false, "usage: countersign <command>"},
		{[]string{"nosuch"}, 2, false, `unknown command "nosuch"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			out := stderr.String()
			if tt.stdout {
				out = stdout.String()
			}
			if code != tt.code || !strings.Contains(out, tt.wantInText) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q on %s", code, stdout.String(), stderr.String(),
					tt.code, tt.wantInText, map[bool]string{true: "stdout", false: "stderr"}[tt.stdout])
			}
			if tt.stdout && !strings.Contains(out, "approve") {
				t.Errorf("usage %q does not list the commands", out)
			}
		})
	}
}
