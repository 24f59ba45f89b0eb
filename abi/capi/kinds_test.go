//go:build cgo

package capi

import "testing"

// Every table of handles has a kind of its own: a kind that two tables
// shared would let one table's handle (a group) pass as the other's (a
// window) and reach whatever object had the same index there, instead of
// failing with the standard's error class. A new kind goes in this list.
func TestHandleKindsDistinct(t *testing.T) {
	kinds := map[string]uintptr{
		"kindComm": kindComm, "kindType": kindType, "kindOp": kindOp, "kindRequest": kindRequest, "kindInfo": kindInfo,
		"kindGroup": kindGroup, "kindErrhandler": kindErrhandler, "kindCommKeyval": kindCommKeyval, "kindTypeKeyval": kindTypeKeyval,
		"kindWin": kindWin, "kindWinErrhandler": kindWinErrhandler, "kindWinGroup": kindWinGroup,
		"kindTEnum": kindTEnum, "kindTCvar": kindTCvar, "kindTSession": kindTSession, "kindTPvar": kindTPvar,
		"kindSession": kindSession, "kindSessionErrh": kindSessionErrh, "kindMessage": kindMessage,
		"kindFile": kindFile, "kindFileErrhandler": kindFileErrhandler,
	}
	seen := map[uintptr]string{}
	for name, k := range kinds {
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s are both kind %#x", name, other, k)
		}
		seen[k] = name
		if k == 0 || k >= 1<<(32-kindShift) {
			t.Errorf("%s is kind %#x, outside the handle's kind bits", name, k)
		}
	}
}
