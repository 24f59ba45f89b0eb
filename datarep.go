package mpi

import (
	"fmt"
	"sync"

	"github.com/mpigo/mpi/internal/datatype"
)

// User-defined data representations (MPI-4.1 section 14.5.3,
// MPI_Register_datarep). A registered representation gives every basic
// kind a size in the file (its extent function) and converts between the
// caller's memory and the file's bytes (its conversion functions). A
// view in it lays the filetype out with the file sizes of its basic
// elements, as the standard asks: counts of elements (a vector's stride,
// a subarray's sizes) scale with them, byte displacements (hvector,
// hindexed, struct, resized) are taken as file bytes as they are. An
// access packs the caller's data once into a stream in the file's
// representation (calling the write conversion once, at position 0), and
// a read converts the stream it brought back once; the rest of the path
// (data sieving, two-phase I/O) moves file bytes and never knows.

// DatarepConversion converts count basic data items between userbuf, the
// caller's buffer laid out by dt (tiled: the items of count/items-per-dt
// consecutive dt's, starting at item position), and filebuf, which holds
// count items back to back in the file's representation, each taking
// the size the representation's DatarepExtent gives its kind. The read
// conversion fills userbuf from filebuf; the write conversion fills
// filebuf from userbuf. dt is the datatype the caller passed to the
// access (its basic items, in type-map order, say what each item is:
// dt.BasicItems lists them). A returned error fails the access with
// ErrConversion and wraps the error; a panic is recovered into such an
// error.
type DatarepConversion func(userbuf []byte, dt *Datatype, count int, filebuf []byte, position int) error

// DatarepExtent returns the size in the file of one item of the basic
// datatype dt (Int32, Float64, Byte, ...) in a data representation
// (MPI_Datarep_extent_function). It is called once per basic kind per
// representation; an error or a negative size fails the view or access
// that needed it with ErrConversion.
type DatarepExtent func(dt *Datatype) (int64, error)

// dataRep is a registered representation.
type dataRep struct {
	name        string
	read, write DatarepConversion
	extent      DatarepExtent

	// ext32: the built-in external32Rep, whose sizes and conversions are
	// the engine's (no user functions).
	ext32 bool

	mu   sync.Mutex
	ext  map[datatype.Basic]int64 // file size of each basic kind asked so far
	errs map[datatype.Basic]error
}

// external32Rep is "external32" where a datatype holds basic kinds that
// take fewer bytes there than in memory (CLong, CUlong): a view or access
// with such a datatype goes the way of the registered representations,
// which lays the filetype out and sizes the data with the file sizes,
// converting with the engine's PackExternal and UnpackExternal. Views
// and accesses without such kinds keep the plain external32 path, where
// file and memory sizes agree.
var external32Rep = &dataRep{name: "external32", ext32: true}

var dataReps struct {
	sync.Mutex
	m map[string]*dataRep
}

// RegisterDatarep registers the data representation name for SetView
// (MPI_Register_datarep). read converts file bytes to memory, write
// memory to file bytes, and extent gives the file size of each basic
// kind. A nil read or write (MPI_CONVERSION_FN_NULL) moves native bytes
// in that direction: each item's native bytes sit at the start of its
// file slot, padded with zeros to the size extent gives (a size smaller
// than the native one fails the access with ErrConversion). A nil
// extent, an empty name or a name longer than 127 bytes
// (MPI_MAX_DATAREP_STRING) is ErrArg. A name already registered, or
// native, internal or external32, gives ErrDupDatarep.
//
// The registration is for the whole process and lasts until it exits,
// as in MPI: call it once, before SetView, on every process that uses
// the name (with Run, once before Run rather than on every rank).
func RegisterDatarep(name string, read, write DatarepConversion, extent DatarepExtent) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("RegisterDatarep", nil, Undefined, Undefined), &err)
	}
	bad := func(class error, format string, args ...any) error {
		return fileErr(nil, "RegisterDatarep", "", class, nil, format, args...)
	}
	switch {
	case name == "":
		return bad(ErrArg, "empty name")
	case len(name) > 127:
		return bad(ErrArg, "name of %d bytes (at most 127)", len(name))
	case extent == nil:
		return bad(ErrArg, "data representation %q: nil extent function", name)
	}
	switch name {
	case "native", "internal", "external32":
		return bad(ErrDupDatarep, "data representation %q is predefined", name)
	}
	dataReps.Lock()
	defer dataReps.Unlock()
	if dataReps.m == nil {
		dataReps.m = map[string]*dataRep{}
	}
	if _, ok := dataReps.m[name]; ok {
		return bad(ErrDupDatarep, "data representation %q", name)
	}
	dataReps.m[name] = &dataRep{name: name, read: read, write: write, extent: extent,
		ext: map[datatype.Basic]int64{}, errs: map[datatype.Basic]error{}}
	return nil
}

// lookupDatarep returns the registered representation name, or nil.
func lookupDatarep(name string) *dataRep {
	dataReps.Lock()
	defer dataReps.Unlock()
	return dataReps.m[name]
}

// BasicItems returns the basic datatypes of one element of d in
// type-map order, one entry per item (a vector of 3 Int32 gives three
// Int32), as a DatarepConversion walks them. nil for a nil or freed d.
func (d *Datatype) BasicItems() []*Datatype {
	if d == nil || d.isFreed() || d.t == nil {
		return nil
	}
	var out []*Datatype
	for _, b := range d.t.Blocks {
		k := basicDatatype(b.Basic)
		for i := int64(0); i < b.N; i++ {
			out = append(out, k)
		}
	}
	return out
}

// kindExtent returns the file size of basic kind k, asking the user's
// extent function the first time (a panic in it is an error).
func (r *dataRep) kindExtent(k datatype.Basic) (int64, error) {
	if r.ext32 {
		return int64(k.ExternalSize()), nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.ext[k]; ok {
		return e, nil
	}
	if err, ok := r.errs[k]; ok {
		return 0, err
	}
	e, err := callExtent(r.extent, basicDatatype(k))
	if err == nil && e < 0 {
		err = fmt.Errorf("extent function gave %d for %s", e, basicDatatype(k).name)
	}
	if err != nil {
		err = fmt.Errorf("data representation %q: %w", r.name, err)
		r.errs[k] = err
		return 0, err
	}
	r.ext[k] = e
	return e, nil
}

func callExtent(fn DatarepExtent, dt *Datatype) (e int64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("extent function panicked: %v", p)
		}
	}()
	return fn(dt)
}

// callConversion runs a user conversion function, recovering a panic.
func callConversion(fn DatarepConversion, what string, userbuf []byte, dt *Datatype, count int, filebuf []byte) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s conversion function panicked: %v", what, p)
		}
	}()
	return fn(userbuf, dt, count, filebuf, 0)
}

// fileSize returns the bytes one element of d takes in the file.
func (r *dataRep) fileSize(d *Datatype) (int64, error) {
	var n int64
	for _, b := range d.t.Blocks {
		e, err := r.kindExtent(b.Basic)
		if err != nil {
			return 0, err
		}
		n += b.N * e
	}
	return n, nil
}

// fileType rebuilds d with each basic element the size it has in the
// file, by replaying the constructor calls that made it.
func (r *dataRep) fileType(d *Datatype) (*Datatype, error) {
	c := d.recipe()
	if c.combiner == CombinerNamed || c.combiner == CombinerF90Real || c.combiner == CombinerF90Complex || c.combiner == CombinerF90Integer {
		return r.namedFileType(d)
	}
	olds := make([]*Datatype, len(c.types))
	for i, t := range c.types {
		o, err := r.fileType(t)
		if err != nil {
			return nil, err
		}
		olds[i] = o
	}
	in, ad := c.ints, c.addrs
	switch c.combiner {
	case CombinerDup:
		return olds[0], nil
	case CombinerContiguous:
		return NewContiguous(in[0], olds[0])
	case CombinerVector:
		return NewVector(in[0], in[1], in[2], olds[0])
	case CombinerHvector:
		return NewHvector(in[0], in[1], ad[0], olds[0])
	case CombinerIndexed:
		n := in[0]
		return NewIndexed(in[1:1+n], in[1+n:1+2*n], olds[0])
	case CombinerHindexed:
		return NewHindexed(in[1:], ad, olds[0])
	case CombinerIndexedBlock:
		return NewIndexedBlock(in[1], in[2:], olds[0])
	case CombinerHindexedBlock:
		return NewHindexedBlock(in[1], ad, olds[0])
	case CombinerStruct:
		return NewStruct(in[1:], ad, olds)
	case CombinerResized:
		return NewResized(olds[0], ad[0], ad[1])
	case CombinerSubarray:
		n := in[0]
		return NewSubarray(in[1:1+n], in[1+n:1+2*n], in[1+2*n:1+3*n], Order(in[1+3*n]), olds[0])
	case CombinerDarray:
		n := in[2]
		g := in[3:]
		dist := make([]Distribution, n)
		for i := range dist {
			dist[i] = Distribution(g[n+i])
		}
		return NewDarray(in[0], in[1], g[:n], dist, g[2*n:3*n], g[3*n:4*n], Order(g[4*n]), olds[0])
	}
	return nil, fmt.Errorf("datatype %s: combiner %s has no file layout", d.name, c.combiner)
}

// namedFileType is a predefined datatype in the file: itself if every
// basic item keeps its size, else its items back to back at their file
// sizes, as bytes.
func (r *dataRep) namedFileType(d *Datatype) (*Datatype, error) {
	same := true
	var total int64
	for _, b := range d.t.Blocks {
		e, err := r.kindExtent(b.Basic)
		if err != nil {
			return nil, err
		}
		same = same && e == int64(b.Basic.Size())
		total += b.N * e
	}
	if same && d.t.Contiguous() {
		return d, nil
	}
	return NewContiguous(int(total), Byte)
}

// toFile writes count elements of dt in buf to stream in the file's
// representation (len(stream) is their file size).
func (r *dataRep) toFile(stream, buf []byte, count int, dt *Datatype) error {
	if r.ext32 {
		return dt.t.PackExternal(stream, buf, count)
	}
	items := count * int(dt.t.NBasic)
	if r.write != nil {
		return callConversion(r.write, "write", buf, dt, items, stream)
	}
	p := getScratch(count * dt.size)
	defer putScratch(p)
	native := (*p)[:count*dt.size]
	dt.t.PackAt(native, buf, 0)
	return r.slots(native, stream, count, dt, true)
}

// fromFile converts the whole elements of dt in stream (file
// representation) into buf.
func (r *dataRep) fromFile(stream, buf []byte, count int, dt *Datatype) error {
	if r.ext32 {
		return dt.t.UnpackExternal(stream, buf, count)
	}
	items := count * int(dt.t.NBasic)
	if r.read != nil {
		return callConversion(r.read, "read", buf, dt, items, stream)
	}
	p := getScratch(count * dt.size)
	defer putScratch(p)
	native := (*p)[:count*dt.size]
	if err := r.slots(native, stream, count, dt, false); err != nil {
		return err
	}
	dt.t.UnpackAt(native, buf, 0)
	return nil
}

// slots copies each item between its native bytes and the start of its
// file slot (zero-padded on the way out): the layout without conversion
// functions.
func (r *dataRep) slots(native, file []byte, count int, dt *Datatype, out bool) error {
	var n, f int64
	for e := 0; e < count; e++ {
		for _, b := range dt.t.Blocks {
			size := int64(b.Basic.Size())
			ext, err := r.kindExtent(b.Basic)
			if err != nil {
				return err
			}
			if ext < size {
				return fmt.Errorf("data representation %q has no conversion functions and gives %s %d bytes in the file, fewer than its %d", r.name, basicDatatype(b.Basic).name, ext, size)
			}
			for i := int64(0); i < b.N; i++ {
				if out {
					copy(file[f:f+size], native[n:n+size])
					clear(file[f+size : f+ext])
				} else {
					copy(native[n:n+size], file[f:f+size])
				}
				n += size
				f += ext
			}
		}
	}
	return nil
}
