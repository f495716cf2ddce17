// Package snapshot is the format of a mirror's snapshot and its storage
// in an object store: a head naming what it was taken of (the stream's
// creation, the sequence S it is complete up to, the packing and its
// sample), entries written with a dictionary of the strings that repeat,
// and the whole kept in parts under a manifest that names them. It knows
// nothing of what a mirror holds: views writes and reads its entries.
//
// A snapshot is trusted only by Head.Usable: taken of the same stream, the
// stream not behind S, and, when the stream was written after S, write S
// young enough that every removal after it still has its marker.
package snapshot
