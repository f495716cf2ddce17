package kvstate

// UseLeaderReads makes s read as on a replicated bucket (read.go).
func UseLeaderReads(s *Store) { s.leaderReads = true }

// FewReadRetries shortens the re-reads of stale reads for a test.
func FewReadRetries(t interface{ Cleanup(func()) }) {
	was := readRetries
	readRetries = 2
	t.Cleanup(func() { readRetries = was })
}

// FromReplica marks r as read from a replica that may lag.
func FromReplica(r Record) Record { r.replica = true; return r }
