package config

// DemoYAML is the configuration used when no file is given: tenant demo,
// member u-1, agents agt_main → agt_programmer → agt_sub, and fixed dev
// tokens. Development only.
const DemoYAML = `tenants:
  - id: demo
    request_timeout: 24h
    approval_ttl: 5m
    read_rules: ["tools.call:read_*"]
    members:
      - id: u-1
        policy: {allow: ["*"], deny: []}
    agents:
      - {id: agt_main, member: u-1, role: "Coordinates the support team."}
      - id: agt_programmer
        member: u-1
        parent: agt_main
        role: "Writes and runs code."
        brief: "Fix the failing refund job."
        memory: "The refund job runs nightly."
      - {id: agt_sub, member: u-1, parent: agt_programmer, role: "A subagent the programmer spawned."}
    tokens:
      - {token: dev-person, principal: "person:u-1", scopes: [approvals:read, approvals:write]}
      - {token: dev-main, principal: "agent:agt_main", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: dev-programmer, principal: "agent:agt_programmer", scopes: [requests:write, approvals:read, approvals:write]}
      - {token: dev-sub, principal: "agent:agt_sub", scopes: [requests:write, approvals:read, approvals:write]}
`

// Demo returns the parsed demo configuration.
func Demo() *Config {
	c, err := Parse([]byte(DemoYAML))
	if err != nil {
		panic(err) // the demo is a constant; a test pins that it parses
	}
	return c
}
