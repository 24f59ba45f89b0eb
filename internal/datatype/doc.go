// Package datatype decides how a Go value becomes message bytes.
//
// # Plain and encoded types
//
// A type is plain when its values are fixed-size memory without pointers:
// booleans, signed and unsigned integers, floats, complex numbers, and
// arrays and structs made only of those, at any depth (struct{} and
// zero-length arrays included). Plain values, and slices of plain elements,
// travel as their raw memory, in the machine's byte order and layout
// (padding included), with no encoding: [ValueBytes] and [SliceBytes] view
// that memory without copying, and [BytesToSlice] and [MakeSlice] turn
// received bytes back into elements.
//
// uintptr and unsafe.Pointer count as pointers: they are not plain, because
// an address means nothing on another rank, and [Check] refuses them.
// Strings, slices, maps, pointers, interfaces, channels and functions are
// not plain either; a slice of plain elements is not plain itself, but its
// [Info.Elem] is.
//
// Everything else is encoded by [Encode] and decoded by [Decode]. Strings
// are their bytes, []string is a uvarint count then a uvarint length and the
// bytes of each string, and plain values and slices of plain elements (of
// non-zero size) are their memory, as above; the rest goes through encoding/gob,
// with these consequences:
//
//   - only exported struct fields travel; a struct with fields but none
//     exported cannot be encoded ([Check] says so);
//   - a struct field of channel or function type, which gob would silently
//     drop, makes [Check] refuse the type instead;
//   - the concrete types stored in interface values must be registered
//     with gob.Register on every rank (gob registers the basic types
//     itself); an unregistered one fails when it is encoded;
//   - types with a GobEncode, MarshalBinary or MarshalText method (such as
//     time.Time and *big.Int) travel through it, unless they are plain:
//     plain types always travel as memory;
//   - nil pointers arrive as nil, but a nil element of a slice of pointers
//     cannot be encoded;
//   - an empty slice or map inside a gob-encoded value may arrive as nil;
//   - pointers are flattened: two pointers to one value arrive as two
//     values, and data with a cycle (a circular list, say) must not be
//     encoded: gob recurses until the stack overflows, which kills the
//     process. Recursive types are fine.
//
// # Signatures
//
// Every type has a 64-bit signature ([Info.Sig]): an FNV-1a hash of a
// canonical description of its structure: kinds, sizes of int, uint and
// uintptr, array lengths, struct field names and types in order, map key
// and element types, interface method names, recursively, and the package
// path and name of every named type, so that type Celsius float64 and
// float64 differ. Struct tags and method sets of non-interface types do not
// count. A message carries the signature of its type, so a receive of
// another type is refused before it decodes garbage. Signatures are never
// 0, and they are the same in every process built from the same type
// definitions on the same architecture.
package datatype
