// Package broker starts the embedded nats-server with JetStream, or
// connects to an external NATS cluster, and hands back a JetStream context.
//
// The embedded server fsyncs every write (sync_interval: always): NATS'
// default syncs only every two minutes, and a machine crash would then lose
// writes it had acknowledged.
//
// Security contract (SPEC §9): the embedded server's client port
// (Config.Listen) admits countersign's own user (InternalUser, a random
// password per start, every permission) and tenant tokens, each looked up
// through the Authenticator on connect and given only GrantFor's
// permissions; anything else is refused at connect, and so is every tenant
// token until SetAuthenticator is called. On an external cluster the same
// Grant reaches the server through auth callout (Config.CalloutSeed), with
// countersign as the callout service.
package broker
