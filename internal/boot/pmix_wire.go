package boot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// The PMIx message buffer ("bfrops"), as the PMIx servers of Slurm's
// pmix plugin and Open MPI's daemons read and write it. Written from the
// PMIx standard and a reading of the open-source server's wire format;
// only the part a client needs.
//
// A buffer is a sequence of packed items with no framing of its own. An
// item packed at the top level is preceded by its count (an int32); inside
// a structure the fields follow each other without counts. The buffer
// type both sides agree on here is "non-described": data types are written
// only where the format needs them (the type of a value, of an array).
//
// Integers come in two encodings, chosen by the bfrops module named in the
// connection handshake:
//
//   - fixed (modules v21 and v3, PMIx 2.1 to 3.x servers): 16-, 32- and
//     64-bit integers are big-endian; a size_t or an int is preceded by the
//     data type it was widened to (uint64, int32), as a uint16.
//   - flex (modules v4 and v41, PMIx 4 and later): every integer of 16 bits
//     or more is a little-endian base-128 number, 7 bits a byte with the
//     high bit set on every byte but the last (at most 8 such bytes, then
//     one whole byte); a signed integer is first folded: v<0 gives
//     (^v)<<1|1, else v<<1. A size_t or an int carries no type.
//
// Either way a string is its length including the terminating NUL (an
// int32; 0 for a NULL string) and then its bytes with the NUL; a byte,
// bool or command is one byte.

// PMIx data types (pmix_data_type_t), as the standard numbers them.
const (
	pmixUndef         = 0
	pmixBool          = 1
	pmixByte          = 2
	pmixString        = 3
	pmixSize          = 4
	pmixPID           = 5
	pmixInt           = 6
	pmixInt8          = 7
	pmixInt16         = 8
	pmixInt32         = 9
	pmixInt64         = 10
	pmixUint          = 11
	pmixUint8         = 12
	pmixUint16        = 13
	pmixUint32        = 14
	pmixUint64        = 15
	pmixFloat         = 16
	pmixDouble        = 17
	pmixTimeval       = 18
	pmixTime          = 19
	pmixStatus        = 20
	pmixValue         = 21
	pmixProc          = 22
	pmixTInfo         = 24
	pmixByteObject    = 27
	pmixKval          = 28
	pmixPersist       = 30
	pmixPointer       = 31
	pmixScope         = 32
	pmixDataRange     = 33
	pmixCommand       = 34
	pmixInfoDirs      = 35
	pmixDataType      = 36
	pmixProcState     = 37
	pmixDataArray     = 39
	pmixProcRank      = 40
	pmixCompressedStr = 42
	pmixAllocDir      = 43
	pmixIOFChannel    = 45
	pmixEnvar         = 46
	pmixJobState      = 50
	pmixLinkState     = 51
	pmixLocType       = 58
	pmixCompressedBO  = 59
	pmixProcNspace    = 60
)

// Ranks with a meaning of their own.
const (
	pmixRankUndef    = math.MaxUint32
	pmixRankWildcard = math.MaxUint32 - 1
)

// Scopes of a put (pmix_scope_t).
const (
	PMIxLocal  = 1 // seen by the ranks of the same node
	PMIxRemote = 2 // seen by the ranks of other nodes
	PMIxGlobal = 3 // seen by all
)

// pmixVal is a decoded PMIx value: its type and its Go form (bool, uint8,
// string, []byte, int64, uint64, float64, pmixProcID, []pmixInfo, []any).
type pmixVal struct {
	Type uint16
	V    any
}

type pmixProcID struct {
	Nspace string
	Rank   uint32
}

type pmixInfo struct {
	Key   string
	Flags uint32
	Val   pmixVal
}

// String shows a value the way `mpigo info` and error messages print it.
func (v pmixVal) String() string {
	switch x := v.V.(type) {
	case string:
		return x
	case []byte:
		return fmt.Sprintf("%d bytes", len(x))
	case nil:
		return "(none)"
	}
	return fmt.Sprint(v.V)
}

// uint returns an integer value as a uint64, or false.
func (v pmixVal) uint() (uint64, bool) {
	switch x := v.V.(type) {
	case uint64:
		return x, true
	case int64:
		if x >= 0 {
			return uint64(x), true
		}
	case uint8:
		return uint64(x), true
	}
	return 0, false
}

// pmixEnc builds a buffer.
type pmixEnc struct {
	b    []byte
	flex bool
}

func (e *pmixEnc) byte1(v byte) { e.b = append(e.b, v) }

func (e *pmixEnc) varint(u uint64) {
	for i := 0; i < 8; i++ {
		c := byte(u & 0x7f)
		u >>= 7
		if u == 0 {
			e.b = append(e.b, c)
			return
		}
		e.b = append(e.b, c|0x80)
	}
	e.b = append(e.b, byte(u))
}

func fold(v int64) uint64 {
	if v < 0 {
		return uint64(^v)<<1 | 1
	}
	return uint64(v) << 1
}

func (e *pmixEnc) u16(v uint16) {
	if e.flex {
		e.varint(uint64(v))
		return
	}
	e.b = binary.BigEndian.AppendUint16(e.b, v)
}

func (e *pmixEnc) i32(v int32) {
	if e.flex {
		e.varint(fold(int64(v)))
		return
	}
	e.b = binary.BigEndian.AppendUint32(e.b, uint32(v))
}

func (e *pmixEnc) u32(v uint32) {
	if e.flex {
		e.varint(uint64(v))
		return
	}
	e.b = binary.BigEndian.AppendUint32(e.b, v)
}

func (e *pmixEnc) u64(v uint64) {
	if e.flex {
		e.varint(v)
		return
	}
	e.b = binary.BigEndian.AppendUint64(e.b, v)
}

// size packs a size_t.
func (e *pmixEnc) size(v int) {
	if !e.flex {
		e.u16(pmixUint64)
	}
	e.u64(uint64(v))
}

func (e *pmixEnc) str(s string) {
	e.i32(int32(len(s) + 1))
	e.b = append(e.b, s...)
	e.b = append(e.b, 0)
}

// count starts a top-level item: the number of values that follow.
func (e *pmixEnc) count(n int) { e.i32(int32(n)) }

func (e *pmixEnc) proc(p pmixProcID) {
	e.str(p.Nspace)
	e.u32(p.Rank)
}

// val packs the data of a value (its type is written by the caller).
func (e *pmixEnc) val(v pmixVal) error {
	switch x := v.V.(type) {
	case bool:
		b := byte(0)
		if x {
			b = 1
		}
		e.byte1(b)
	case string:
		e.str(x)
	case []byte:
		e.size(len(x))
		e.b = append(e.b, x...)
	case uint32:
		e.u32(x)
	case uint8:
		e.byte1(x)
	default:
		return fmt.Errorf("cannot pack %T", v.V)
	}
	return nil
}

// kval packs a key and its typed value (no count).
func (e *pmixEnc) kval(key string, v pmixVal) error {
	e.str(key)
	e.u16(v.Type)
	return e.val(v)
}

// info packs one pmix_info_t (no count).
func (e *pmixEnc) info(in pmixInfo) error {
	e.str(in.Key)
	e.u32(in.Flags)
	e.u16(in.Val.Type)
	return e.val(in.Val)
}

// pmixDec reads a buffer. Every length read from it is checked against
// what is left, so a lying length fails instead of allocating.
type pmixDec struct {
	b    []byte
	flex bool
}

var errPMIxShort = errors.New("message ends early")

// maxPMIxDepth bounds nested arrays (an info whose value is an array of
// infos whose values ...).
const maxPMIxDepth = 8

func (d *pmixDec) more() bool { return len(d.b) > 0 }

func (d *pmixDec) byte1() (byte, error) {
	if len(d.b) < 1 {
		return 0, errPMIxShort
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c, nil
}

func (d *pmixDec) varint() (uint64, error) {
	var v uint64
	for i := 0; i < 9; i++ {
		if len(d.b) == 0 {
			return 0, errPMIxShort
		}
		c := d.b[0]
		d.b = d.b[1:]
		if i == 8 {
			return v | uint64(c)<<56, nil
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return v, nil
}

func (d *pmixDec) fixed(n int) (uint64, error) {
	if len(d.b) < n {
		return 0, errPMIxShort
	}
	var v uint64
	for _, c := range d.b[:n] {
		v = v<<8 | uint64(c)
	}
	d.b = d.b[n:]
	return v, nil
}

func (d *pmixDec) unsigned(bits int) (uint64, error) {
	if !d.flex {
		return d.fixed(bits / 8)
	}
	v, err := d.varint()
	if err == nil && bits < 64 && v>>bits != 0 {
		return 0, fmt.Errorf("%d does not fit %d bits", v, bits)
	}
	return v, err
}

func (d *pmixDec) signed(bits int) (int64, error) {
	if !d.flex {
		v, err := d.fixed(bits / 8)
		switch bits {
		case 16:
			return int64(int16(v)), err
		case 32:
			return int64(int32(v)), err
		}
		return int64(v), err
	}
	u, err := d.varint()
	if err != nil {
		return 0, err
	}
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	if bits < 64 && (v < -1<<(bits-1) || v >= 1<<(bits-1)) {
		return 0, fmt.Errorf("%d does not fit %d bits", v, bits)
	}
	return v, nil
}

func (d *pmixDec) u16() (uint16, error) { v, err := d.unsigned(16); return uint16(v), err }
func (d *pmixDec) u32() (uint32, error) { v, err := d.unsigned(32); return uint32(v), err }
func (d *pmixDec) i32() (int32, error)  { v, err := d.signed(32); return int32(v), err }

// tagged reads the data type a fixed-encoding size_t or int carries and
// checks it is want.
func (d *pmixDec) tagged(want uint16) error {
	t, err := d.u16()
	if err == nil && t != want {
		err = fmt.Errorf("integer of type %d where type %d was expected", t, want)
	}
	return err
}

func (d *pmixDec) size() (uint64, error) {
	if !d.flex {
		if err := d.tagged(pmixUint64); err != nil {
			return 0, err
		}
	}
	return d.unsigned(64)
}

// count reads the count of a top-level item; it cannot exceed the bytes
// left (every value takes at least one).
func (d *pmixDec) count() (int, error) {
	n, err := d.i32()
	if err != nil {
		return 0, err
	}
	if n < 0 || int(n) > len(d.b) {
		return 0, fmt.Errorf("count %d with %d bytes left", n, len(d.b))
	}
	return int(n), nil
}

func (d *pmixDec) bytesN(n uint64) ([]byte, error) {
	if n > uint64(len(d.b)) {
		return nil, fmt.Errorf("length %d with %d bytes left", n, len(d.b))
	}
	b := d.b[:n:n]
	d.b = d.b[n:]
	return b, nil
}

func (d *pmixDec) str() (string, error) {
	n, err := d.i32()
	if err != nil {
		return "", err
	}
	if n < 0 {
		return "", fmt.Errorf("string of length %d", n)
	}
	if n == 0 {
		return "", nil
	}
	b, err := d.bytesN(uint64(n))
	if err != nil {
		return "", err
	}
	if b[n-1] != 0 {
		return "", errors.New("string without its terminating NUL")
	}
	return string(b[:n-1]), nil
}

func (d *pmixDec) proc() (pmixProcID, error) {
	ns, err := d.str()
	if err != nil {
		return pmixProcID{}, err
	}
	r, err := d.u32()
	return pmixProcID{ns, r}, err
}

func (d *pmixDec) bo() ([]byte, error) {
	n, err := d.size()
	if err != nil {
		return nil, err
	}
	return d.bytesN(n)
}

// typed reads a value's type and then its data.
func (d *pmixDec) typed(depth int) (pmixVal, error) {
	t, err := d.u16()
	if err != nil {
		return pmixVal{}, err
	}
	return d.val(t, depth)
}

// val reads the data of a value of type t.
func (d *pmixDec) val(t uint16, depth int) (pmixVal, error) {
	if depth > maxPMIxDepth {
		return pmixVal{}, errors.New("values nested too deep")
	}
	v := pmixVal{Type: t}
	var err error
	switch t {
	case pmixUndef:
	case pmixBool:
		var c byte
		c, err = d.byte1()
		v.V = c != 0
	case pmixByte, pmixInt8, pmixUint8, pmixPersist, pmixPointer, pmixScope, pmixDataRange,
		pmixCommand, pmixProcState, pmixAllocDir, pmixJobState, pmixLinkState:
		v.V, err = d.byte1()
	case pmixString, pmixProcNspace:
		v.V, err = d.str()
	case pmixFloat, pmixDouble:
		var s string
		if s, err = d.str(); err == nil {
			var f float64
			if f, err = strconv.ParseFloat(s, 64); err != nil {
				err = fmt.Errorf("float %q", s)
			}
			v.V = f
		}
	case pmixSize:
		v.V, err = d.size()
	case pmixPID:
		if err = d.tagged(pmixUint32); err == nil {
			v.V, err = d.unsigned(32)
		}
	case pmixInt, pmixUint:
		if !d.flex {
			want := uint16(pmixInt32)
			if t == pmixUint {
				want = pmixUint32
			}
			if err = d.tagged(want); err != nil {
				break
			}
		}
		if t == pmixInt {
			v.V, err = d.signed(32)
		} else {
			v.V, err = d.unsigned(32)
		}
	case pmixInt16:
		v.V, err = d.signed(16)
	case pmixInt32, pmixStatus:
		v.V, err = d.signed(32)
	case pmixInt64:
		v.V, err = d.signed(64)
	case pmixUint16, pmixDataType, pmixIOFChannel, pmixLocType:
		v.V, err = d.unsigned(16)
	case pmixUint32, pmixProcRank, pmixInfoDirs:
		v.V, err = d.unsigned(32)
	case pmixUint64, pmixTime:
		v.V, err = d.unsigned(64)
	case pmixTimeval:
		var s, us int64
		if s, err = d.signed(64); err == nil {
			us, err = d.signed(64)
		}
		v.V = float64(s) + float64(us)/1e6
	case pmixProc:
		v.V, err = d.proc()
	case pmixByteObject, pmixCompressedStr, pmixCompressedBO:
		v.V, err = d.bo()
	case pmixEnvar:
		var name, val string
		if name, err = d.str(); err == nil {
			if val, err = d.str(); err == nil {
				_, err = d.byte1()
			}
		}
		v.V = name + "=" + val
	case pmixTInfo:
		v.V, err = d.info(depth + 1)
	case pmixValue:
		return d.typed(depth + 1)
	case pmixDataArray:
		v.V, err = d.array(depth + 1)
	default:
		err = fmt.Errorf("data type %d, which mpigo does not read", t)
	}
	return v, err
}

func (d *pmixDec) info(depth int) (pmixInfo, error) {
	var in pmixInfo
	var err error
	if in.Key, err = d.str(); err != nil {
		return in, err
	}
	if in.Flags, err = d.u32(); err != nil {
		return in, err
	}
	in.Val, err = d.typed(depth)
	return in, err
}

// array reads a pmix_data_array_t: element type, count, elements.
func (d *pmixDec) array(depth int) ([]any, error) {
	t, err := d.u16()
	if err != nil {
		return nil, err
	}
	n, err := d.size()
	if err != nil {
		return nil, err
	}
	if n == 0 || t == pmixUndef {
		return nil, nil
	}
	if n > uint64(len(d.b)) {
		return nil, fmt.Errorf("array of %d with %d bytes left", n, len(d.b))
	}
	out := make([]any, 0, n)
	for i := uint64(0); i < n; i++ {
		var x any
		if t == pmixTInfo {
			x, err = d.info(depth)
		} else {
			var v pmixVal
			v, err = d.val(t, depth)
			x = v.V
		}
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// kval reads a key and its typed value (no count).
func (d *pmixDec) kval() (string, pmixVal, error) {
	k, err := d.str()
	if err != nil {
		return "", pmixVal{}, err
	}
	v, err := d.typed(0)
	return k, v, err
}

// status reads a top-level pmix_status_t (count 1, then int32).
func (d *pmixDec) status() (int32, error) {
	n, err := d.count()
	if err != nil {
		return 0, err
	}
	if n != 1 {
		return 0, fmt.Errorf("%d status codes", n)
	}
	return d.i32()
}
