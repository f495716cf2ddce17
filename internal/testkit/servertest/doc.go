// Package servertest starts real countersign servers for tests: embedded
// JetStream in a temporary directory, a real HTTP listener on loopback,
// the demo tenant unless a config is given. Nothing in it is a stand-in:
// it runs the same app the binary runs, built with app.New and run with
// App.Run until Stop ends Run's ctx.
package servertest
