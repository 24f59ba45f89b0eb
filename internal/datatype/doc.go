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
// non-zero size) are their memory, as above. Types made of plain values,
// strings, slices, arrays, structs, maps and pointers, and types with their
// own marshaling methods, go through a codec compiled once per type
// (plan.go, format described there): no reflection per value, the slices
// of one message carved from a few shared arrays, and, with
// [DecodeOwned], strings that share the received bytes. Types holding
// interfaces go through encoding/gob. With either:
//
//   - only exported struct fields travel; a struct with fields but none
//     exported cannot be encoded ([Check] says so);
//   - a struct field of channel or function type makes [Check] refuse the
//     type, naming the field;
//   - types with a GobEncode, MarshalBinary or MarshalText method (such as
//     time.Time and *big.Int) travel through it, unless they are plain:
//     plain types always travel as memory;
//   - pointers are flattened: two pointers to one value arrive as two
//     values (a DAG arrives as a tree). Data with a cycle (a circular
//     list, say) is refused with an error naming the type that contains
//     itself, and so is data nesting pointers, slices and maps more
//     than [MaxDepth] levels deep (a list of more than 10000 nodes), which
//     Decode refuses too: both codecs recurse per level, and an unbounded
//     recursion would overflow the stack, which kills the process.
//     Recursive types are fine. Finding a cycle costs ordinary values
//     nothing but counting levels: the encoder records the values it is
//     inside only past 1000 levels (cycleCheckAfter), which a cycle
//     always reaches; before gob encodes a value, a walk checks it the
//     same way.
//
// With the compiled codec nil and empty slices and maps stay apart, and a
// slice of pointers may hold nil. With gob (interfaces): the concrete
// types stored in interface values must be registered with gob.Register
// on every rank; an empty slice or map may arrive as nil; a nil element of
// a slice of pointers cannot be encoded.
//
// # Type maps
//
// typemap.go holds MPI's derived datatypes as flattened type maps ([Type]):
// the constructors of MPI-3.1 chapter 4, packing from and unpacking into
// memory at any offset of the packed message (so a message can be packed
// chunk by chunk as it leaves), the external32 format, and the type map of
// a plain Go type ([Info.TypeMap]). [Info.Fields] describes a plain type
// field by field (path, offset, basic kind): what a wire format for
// heterogeneous jobs would send instead of raw memory (see
// docs/datatypes.md).
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
