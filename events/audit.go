package events

import "github.com/countersign/countersign/domain"

// The audit log's subjects (SPEC §14), on the audit streams only; no
// tenant's token reaches them.

// AuditEntrySubject holds tenant's audit entries, one message each.
func AuditEntrySubject(tenant domain.TenantID) string {
	return SubjectRoot + "." + string(tenant) + ".audit.entries"
}

// AuditTreeSubject holds the Merkle tree hashes of tenant's audit log.
func AuditTreeSubject(tenant domain.TenantID) string {
	return SubjectRoot + "." + string(tenant) + ".audit.tree"
}

// AuditInSubject is where a change that no state write carries (a
// sign-in) is published for tenant's audit log.
func AuditInSubject(tenant domain.TenantID) string {
	return SubjectRoot + "." + string(tenant) + ".audit.in"
}

// AuditCursorSubject holds the audit projection's position in its sources.
const AuditCursorSubject = SubjectRoot + ".audit.cursor"

// AuditKeySubject holds the checkpoint signer key countersign made.
const AuditKeySubject = SubjectRoot + ".audit.key"

// AuditEntryFilter and AuditTreeFilter match every tenant's entries and
// tree hashes; AuditInFilter every tenant's audit input.
const (
	AuditEntryFilter = SubjectRoot + ".*.audit.entries"
	AuditTreeFilter  = SubjectRoot + ".*.audit.tree"
	AuditInFilter    = SubjectRoot + ".*.audit.in"
)

// Event types of the audit log that are not CloudEvents of SPEC §9.
const (
	TypeAgentRegistered = "dev.countersign.agent.registered"
	TypeAgentRetired    = "dev.countersign.agent.retired"
	TypeAgentRemoved    = "dev.countersign.agent.removed"
	TypeRulePut         = "dev.countersign.rule.put"
	TypeRuleDeleted     = "dev.countersign.rule.deleted"
	TypeConfigApplied   = "dev.countersign.config.applied"
	TypeSignIn          = "dev.countersign.signin"
	TypeSignOut         = "dev.countersign.signout"
	TypeSignInRefused   = "dev.countersign.signin.refused"
	// TypeDelegationEnded: delegated work stored in force ended at start,
	// because authority never crosses members (SPEC §3).
	TypeDelegationEnded = "dev.countersign.delegation.ended"
)
