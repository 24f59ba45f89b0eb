package wire

import (
	"errors"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tests := []Header{
		{Kind: Eager, Context: 4, Src: 3, Tag: 99, Size: 8, Sig: 0xdeadbeef},
		{Kind: RTS, Flags: FlagSync, Context: 1<<31 + 5, Src: 1 << 20, Tag: 1<<30 - 1, Size: 1 << 40, SendID: 1<<64 - 1},
		{Kind: RTS, Flags: FlagToken, Context: 2, Size: 1 << 20, SendID: 7, Token: 0xc000123456789abc},
		{Kind: CTS, RecvID: 77, SendID: 12},
		{Kind: Data, Size: 100, Offset: 60},
		{Kind: CancelAck, Flags: FlagCancelled, SendID: 3},
	}
	for _, h := range tests {
		var b [HeaderSize]byte
		n := 0
		if h.Kind == Data {
			n = 40
		}
		h.Marshal(b[:], n)
		got, gotN, err := Unmarshal(b[:])
		if err != nil {
			t.Fatalf("%v: %v", h.Kind, err)
		}
		if got != h || gotN != n {
			t.Errorf("round trip: got %+v (%d), want %+v (%d)", got, gotN, h, n)
		}
	}
}

func TestUnmarshalErrors(t *testing.T) {
	good := func() []byte {
		b := make([]byte, HeaderSize)
		h := Header{Kind: Eager, Size: 10}
		h.Marshal(b, 10)
		return b
	}
	tests := []struct {
		name string
		mod  func(b []byte) []byte
		want error
	}{
		{"short", func(b []byte) []byte { return b[:10] }, ErrShort},
		{"magic", func(b []byte) []byte { b[0] = 0; return b }, ErrMagic},
		{"version", func(b []byte) []byte { b[1] = 9; return b }, ErrVersion},
		{"kind0", func(b []byte) []byte { b[2] = 0; return b }, ErrKind},
		{"kindbig", func(b []byte) []byte { b[2] = 200; return b }, ErrKind},
		{"overrun", func(b []byte) []byte { b[56] = 11; return b }, ErrLength},
		{"negsize", func(b []byte) []byte { b[23] = 0x80; return b }, ErrLength},
		{"reserved", func(b []byte) []byte { b[61] = 1; return b }, ErrLength},
		{"offset", func(b []byte) []byte { b[24] = 11; return b }, ErrLength},
		{"tokenflag", func(b []byte) []byte { b[2] = byte(RTS); b[56] = 0; b[24] = 1; return b }, ErrLength},
	}
	for _, tt := range tests {
		_, _, err := Unmarshal(tt.mod(good()))
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
	}
}

func FuzzUnmarshal(f *testing.F) {
	var b [HeaderSize]byte
	h := Header{Kind: Data, Size: 100, Offset: 10, Tag: 5}
	h.Marshal(b[:], 20)
	f.Add(b[:])
	f.Add([]byte{Magic, Version, 1})
	h = Header{Kind: RTS, Flags: FlagToken | FlagSync, Size: 1 << 20, SendID: 3, Token: 0x7f0012345000}
	h.Marshal(b[:], 0)
	f.Add(b[:])
	f.Fuzz(func(t *testing.T, data []byte) {
		h, n, err := Unmarshal(data)
		if err != nil {
			return
		}
		// Whatever decodes must encode back to the same bytes.
		var out [HeaderSize]byte
		h.Marshal(out[:], n)
		if string(out[:]) != string(data[:HeaderSize]) {
			t.Fatalf("re-encoding differs:\n%x\n%x", out, data[:HeaderSize])
		}
	})
}

// TestToken: the token of an RTS travels in the Offset slot and comes back
// as Token, never as an Offset; the Offset of other frames is untouched.
func TestToken(t *testing.T) {
	var b [HeaderSize]byte
	h := Header{Kind: RTS, Flags: FlagToken, Size: 100, Token: 1<<63 | 42}
	h.Marshal(b[:], 0)
	got, _, err := Unmarshal(b[:])
	if err != nil || got.Token != h.Token || got.Offset != 0 {
		t.Fatalf("rts token: got %+v, %v", got, err)
	}
	d := Header{Kind: Data, Size: 100, Offset: 60, Token: 5}
	d.Marshal(b[:], 40)
	got, _, err = Unmarshal(b[:])
	if err != nil || got.Offset != 60 || got.Token != 0 {
		t.Fatalf("data offset: got %+v, %v", got, err)
	}
}

func TestUnanswered(t *testing.T) {
	ok := Header{Kind: Eager, Size: 8, SendID: 3}
	if !ok.Unanswered(8) {
		t.Error("plain eager frame with a send id refused")
	}
	for _, h := range []Header{
		{Kind: Eager, Size: 9},
		{Kind: Eager, Size: 8, Flags: FlagSync},
		{Kind: Eager, Size: 8, RecvID: 1},
		{Kind: Eager, Size: 8, Offset: 1},
		{Kind: RTS, Size: 8},
		{Kind: Data, Size: 8},
	} {
		if h.Unanswered(8) {
			t.Errorf("%+v with 8 bytes taken as needing no answer", h)
		}
	}
}

// TestAnswersRTS: the frames by which a receiver ends a sender's export.
func TestAnswersRTS(t *testing.T) {
	for _, tc := range []struct {
		h    Header
		want bool
	}{
		{Header{Kind: CTS}, true},
		{Header{Kind: Fin}, true},
		{Header{Kind: CancelAck, Flags: FlagCancelled}, true},
		{Header{Kind: CancelAck}, false},
		{Header{Kind: RTS, Flags: FlagToken}, false},
		{Header{Kind: Eager}, false},
		{Header{Kind: Data}, false},
	} {
		if got := tc.h.AnswersRTS(); got != tc.want {
			t.Errorf("%+v: AnswersRTS = %v, want %v", tc.h, got, tc.want)
		}
	}
}
