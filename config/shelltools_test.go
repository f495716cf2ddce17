package config

import (
	"strings"
	"testing"
)

// A tenant's shell_tools (SPEC §8) default to the harnesses' shell tools
// when absent, are taken as given ([] naming none), and a list that is not
// of tool names, names one twice, or a read rule reaching one is refused
// naming the line.
func TestTenantShellTools(t *testing.T) {
	ts, err := Demo().DomainTenants()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"Bash", "shell", "run_shell_command", "exec_command", "local_shell"} {
		if !ts[0].ShellTool(tool) {
			t.Errorf("default: %s is not a shell tool", tool)
		}
	}
	if ts[0].ShellTool("Read") {
		t.Errorf("default: Read is a shell tool")
	}
	for yaml, want := range map[string][]string{
		"shell_tools: [my_sh, mcp__box__exec]": {"my_sh", "mcp__box__exec"},
		"shell_tools: []":                      {},
	} {
		c, err := Parse([]byte("tenants:\n  - id: t\n    " + yaml + "\n"))
		if err != nil {
			t.Fatalf("%s: %v", yaml, err)
		}
		ts, _ := c.DomainTenants()
		if got := ts[0].ShellTools; got == nil || strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: shell tools %q, want %q", yaml, got, want)
		}
		if ts[0].ShellTool("Bash") {
			t.Errorf("%s: Bash is still a shell tool", yaml)
		}
	}
	for yaml, want := range map[string]string{
		"shell_tools: [Bash, \"run shell\"]":                          `line 3: shell_tools: "run shell": a tool name is letters, digits`,
		"shell_tools: [\"\"]":                                         `line 3: shell_tools: "": a tool name is 1 to 128 bytes`,
		"shell_tools: [\"sh*\"]":                                      `line 3: shell_tools: "sh*": a tool name is letters, digits`,
		"shell_tools:\n      - my_sh\n      - my_sh":                  `line 5: shell_tools: "my_sh" is listed twice`,
		"shell_tools: Bash":                                           `cannot unmarshal`,
		"shell_tool: [Bash]":                                          `line 3: unknown field "shell_tool"`,
		"shell_tools: [my_sh]\n    read_rules: [\"tools.call:my_*\"]": `line 4: read_rules: read rule "tools.call:my_*" matches the shell tool my_sh`,
	} {
		_, err := Parse([]byte("tenants:\n  - id: t\n    " + yaml + "\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", yaml, err, want)
		}
	}
}
