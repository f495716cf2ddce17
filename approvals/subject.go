package approvals

import (
	"strings"

	"github.com/countersign/countersign/domain"
)

// SPEC §8: the server, not the requester, says what a call is. A call of
// one of the tenant's shell tools (domain.Tenant.ShellTool) is a shell
// request whatever it declares: its stages are those of the command in its
// arguments, which the call digest binds. Without this, a Bash call sent
// as a tool would leave a grant of the whole tool (tools.call:Bash with no
// match) that approves any later command.

// MaxShellCommand bounds a shell request's command.
const MaxShellCommand = 64 << 10

// checkSubject checks in's subject and makes it say what the call is: a
// call of a shell tool gets kind shell and the command of its arguments
// (filled in when in has no subject or no command); a subject of another
// kind, or naming another command, is refused (field subject). Any other
// call keeps the subject it declares, checked the same way when it
// declares shell; a command on a subject of another kind is refused, as
// live clients would show it as what the call runs. Errors:
// InvalidRequest.
func checkSubject(in *SubmitInput, capability domain.Capability, t *domain.Tenant) error {
	sub := in.Subject
	switch {
	case sub != nil && sub.Kind == "":
		return invalid("subject.kind", "subject.kind is required")
	case sub != nil && len(sub.Command) > MaxShellCommand:
		return invalid("subject.command", "at most %d bytes", MaxShellCommand)
	case shellTool(t, capability):
		if sub == nil {
			sub = &domain.Subject{Kind: domain.SubjectShell}
		} else if sub.Kind != domain.SubjectShell {
			return invalid("subject", "%s is one of the tenant's shell_tools, so its call is a shell request: send subject.kind %q, or no subject, not %q",
				capability.Target, domain.SubjectShell, sub.Kind)
		}
	case sub != nil && sub.Kind != domain.SubjectShell && sub.Command != "":
		return invalid("subject.command", "only a shell subject has a command; a %q subject's call is its arguments", sub.Kind)
	case sub == nil || sub.Kind != domain.SubjectShell:
		return nil
	}
	if err := shellCommand(sub, in.Arguments); err != nil {
		return err
	}
	in.Subject = sub
	return nil
}

// shellCommand gives the shell subject sub the command of the call's
// arguments (domain.ShellCommand), refusing a subject that names another:
// the stages decided are those of the call that runs, never a text the
// agent chose beside it.
func shellCommand(sub *domain.Subject, arguments []byte) error {
	cmd, ok := domain.ShellCommand(arguments)
	switch {
	case !ok || strings.TrimSpace(cmd) == "":
		return invalid("arguments.command", "a shell call's arguments need its command line in \"command\": a non-empty string, or an argv of strings")
	case len(cmd) > MaxShellCommand:
		return invalid("arguments.command", "at most %d bytes", MaxShellCommand)
	case sub.Command != "" && sub.Command != cmd:
		return invalid("subject", "subject.command must be the command in the call's arguments (arguments.command); leave it out and the server fills it in")
	}
	sub.Command = cmd
	return nil
}

// shellTool reports whether capability calls one of t's shell tools: a
// tools.call of one, or an apps.call whose target, or whose tool after
// the connection's "/", is one.
func shellTool(t *domain.Tenant, c domain.Capability) bool {
	switch c.Action {
	case domain.ActionToolsCall:
		return t.ShellTool(c.Target)
	case domain.ActionAppsCall:
		return t.ShellTool(c.Target) || t.ShellTool(c.Target[strings.LastIndexByte(c.Target, '/')+1:])
	}
	return false
}
