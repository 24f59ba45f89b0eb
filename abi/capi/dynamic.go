//go:build cgo

package capi

/*
#include <fcntl.h>
#include <unistd.h>
// fcntl is variadic, which cgo cannot call.
static int mpigo_fd_flags(int fd) { return fcntl(fd, F_GETFL); }
static int mpigo_fd_set_flags(int fd, int fl) { return fcntl(fd, F_SETFL, fl); }
*/
import "C"

import (
	"fmt"
	"net"
	"os"
	"sync"
	"unsafe"

	"github.com/mpigo/mpi"
)

// The dynamic-process chapter (MPI-4.1 chapter 11) on mpigo's Spawn,
// SpawnMultiple, GetParent, OpenPort, CommAccept, CommConnect, the name
// service, CommJoin and Disconnect (spawn.go, port.go, names.go).
//
// The collective calls read their root-only arguments at the root alone,
// as the standard says. A bad one there (a NULL command or port name, a
// freed info) must not leave the other ranks waiting in the collective,
// so the root still enters mpigo's call with arguments that make it fail
// on every rank at once (no command, no port): the root then returns the
// class of its own argument's fault, the others MPI_ERR_SPAWN or
// MPI_ERR_PORT.

// maxArgv bounds the walk of a C argument vector, so that one missing
// its NULL terminator ends in an error rather than a walk through memory.
const maxArgv = 1 << 16

// argvArg reads a NULL-terminated C argument vector; MPI_ARGV_NULL (NULL)
// is no arguments.
func argvArg(p unsafe.Pointer) ([]string, error) {
	if p == nil {
		return nil, nil
	}
	var args []string
	for i := 0; ; i++ {
		if i == maxArgv {
			return nil, classErr(MPI_ERR_ARG, fmt.Sprintf("argv has no NULL terminator in its first %d entries", maxArgv))
		}
		s := *(*unsafe.Pointer)(unsafe.Add(p, uintptr(i)*unsafe.Sizeof(p)))
		if s == nil {
			return args, nil
		}
		args = append(args, cString(s))
	}
}

// infoQuiet resolves an info argument that may be MPI_INFO_NULL without
// raising: the caller decides when (and on which ranks) to raise.
func infoQuiet(what string, h uintptr) (*mpi.Info, error) {
	switch h {
	case MPI_INFO_NULL:
		return nil, nil
	case MPI_INFO_ENV:
		return mpi.NewInfo(), nil
	}
	if in, ok := infos.get(h); ok {
		return in, nil
	}
	return nil, classErr(MPI_ERR_INFO, fmt.Sprintf("%s %#x is not an info handle", what, h))
}

// spawnCmd reads one command of a spawn at the root.
func spawnCmd(i int, command, argv unsafe.Pointer, maxprocs int32, info uintptr) (mpi.SpawnCmd, error) {
	if command == nil {
		return mpi.SpawnCmd{}, classErr(MPI_ERR_ARG, fmt.Sprintf("command %d is NULL", i))
	}
	args, err := argvArg(argv)
	if err != nil {
		return mpi.SpawnCmd{}, err
	}
	in, err := infoQuiet("info", info)
	if err != nil {
		return mpi.SpawnCmd{}, err
	}
	return mpi.SpawnCmd{Command: cString(command), Args: args, MaxProcs: int(maxprocs), Info: in}, nil
}

// spawn is MPI_Comm_spawn and MPI_Comm_spawn_multiple: read, at the root
// only, reads the commands.
func spawn(fn string, comm uintptr, root int32, intercomm, errcodes unsafe.Pointer, read func() ([]mpi.SpawnCmd, error)) int32 {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if intercomm == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "intercomm is NULL"))
	}
	var cmds []mpi.SpawnCmd
	var bad error
	atRoot := !ce.c.IsInter() && int(root) == ce.c.Rank()
	if atRoot {
		cmds, bad = read()
		if bad != nil {
			cmds = nil // every rank fails: "no command to spawn"
		}
	}
	ic, _, err := ce.c.SpawnMultiple(cmds, int(root))
	if err != nil {
		if bad != nil {
			err = bad
		} else if atRoot {
			for _, c := range cmds {
				if c.MaxProcs < 0 {
					err = classErr(MPI_ERR_ARG, fmt.Sprintf("maxprocs %d is negative", c.MaxProcs))
				}
			}
		}
		// The codes are those of the processes that were to start:
		// known at the root only (mpigo starts all or none).
		total := 0
		for _, c := range cmds {
			total += max(c.MaxProcs, 0)
		}
		code := raiseOn(fn, ce, err)
		fillCodes(errcodes, total, code)
		return code
	}
	newComm(ce, ic, intercomm)
	// Every child started (mpigo starts all or none): one MPI_SUCCESS per
	// process of the remote group, on every rank, as MPICH gives them.
	fillCodes(errcodes, ic.RemoteSize(), MPI_SUCCESS)
	return MPI_SUCCESS
}

// fillCodes sets the first n codes of array_of_errcodes (NULL:
// MPI_ERRCODES_IGNORE) to code.
func fillCodes(errcodes unsafe.Pointer, n int, code int32) {
	if errcodes == nil || n <= 0 {
		return
	}
	s := unsafe.Slice((*int32)(errcodes), n)
	for i := range s {
		s[i] = code
	}
}

func implComm_spawn(command, argv unsafe.Pointer, maxprocs int32, info uintptr, root int32, comm uintptr, intercomm, errcodes unsafe.Pointer) int32 {
	return spawn("MPI_Comm_spawn", comm, root, intercomm, errcodes, func() ([]mpi.SpawnCmd, error) {
		sc, err := spawnCmd(0, command, argv, maxprocs, info)
		if err != nil {
			return nil, err
		}
		return []mpi.SpawnCmd{sc}, nil
	})
}

// maxSpawnCommands bounds count of MPI_Comm_spawn_multiple (mpigo run
// starts at most 4096 processes a spawn).
const maxSpawnCommands = 4096

func implComm_spawn_multiple(count int32, commands, argvs, maxprocs, infoArr unsafe.Pointer, root int32, comm uintptr, intercomm, errcodes unsafe.Pointer) int32 {
	return spawn("MPI_Comm_spawn_multiple", comm, root, intercomm, errcodes, func() ([]mpi.SpawnCmd, error) {
		switch {
		case count < 1 || count > maxSpawnCommands:
			return nil, classErr(MPI_ERR_ARG, fmt.Sprintf("count %d: want 1 to %d commands", count, maxSpawnCommands))
		case commands == nil || maxprocs == nil || infoArr == nil:
			return nil, classErr(MPI_ERR_ARG, "array_of_commands, array_of_maxprocs or array_of_info is NULL")
		}
		n := int(count)
		cs := unsafe.Slice((*unsafe.Pointer)(commands), n)
		ms := unsafe.Slice((*int32)(maxprocs), n)
		is := unsafe.Slice((*uintptr)(infoArr), n)
		var as []unsafe.Pointer
		if argvs != nil { // MPI_ARGVS_NULL: no arguments for any command
			as = unsafe.Slice((*unsafe.Pointer)(argvs), n)
		}
		cmds := make([]mpi.SpawnCmd, n)
		for i := range cmds {
			var av unsafe.Pointer
			if as != nil {
				av = as[i]
			}
			var err error
			if cmds[i], err = spawnCmd(i, cs[i], av, ms[i], is[i]); err != nil {
				return nil, err
			}
		}
		return cmds, nil
	})
}

// parentMu makes concurrent first calls of MPI_Comm_get_parent agree on
// one handle.
var parentMu sync.Mutex

func implComm_get_parent(parent unsafe.Pointer) int32 {
	const fn = "MPI_Comm_get_parent"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if parent == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "parent is NULL"))
	}
	parentMu.Lock()
	defer parentMu.Unlock()
	var pc *mpi.Comm
	if phase.Load() == phaseRunning {
		// Sessions alone have no world, and no parent to give.
		pc = world.c.GetParent() // nil after its disconnect or free
	}
	if pc == nil {
		*(*uintptr)(parent) = MPI_COMM_NULL
		return MPI_SUCCESS
	}
	if h, ok := commHandles.Load(pc); ok {
		*(*uintptr)(parent) = h.(uintptr)
		return MPI_SUCCESS
	}
	newComm(&world, pc, parent)
	return MPI_SUCCESS
}

func implComm_disconnect(comm unsafe.Pointer) int32 {
	const fn = "MPI_Comm_disconnect"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if comm == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "comm is NULL"))
	}
	h := *(*uintptr)(comm)
	if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
		return raise(fn, h, classErr(MPI_ERR_COMM, "a predefined communicator cannot be disconnected"))
	}
	ce, rc := getComm(fn, h)
	if ce == nil {
		return rc
	}
	err := ce.c.Disconnect()
	// Disconnect frees the communicator even when the other group is
	// gone (it then says so): the handle goes whenever mpigo's
	// communicator is freed. A freed one refuses every call.
	if _, _, aerr := ce.c.GetAttr(mpi.AttrTagUB); err == nil || aerr != nil {
		forgetComm(h, ce.c)
		*(*uintptr)(comm) = MPI_COMM_NULL
	}
	return ce.check(fn, err)
}

// putPortName copies a port name into a buffer of MPI_MAX_PORT_NAME
// bytes, or says why it does not fit (mpigo's names are about 60 bytes;
// only a host name of nearly a kilobyte would make one too long).
func putPortName(dst unsafe.Pointer, name string) error {
	if len(name) > MPI_MAX_PORT_NAME-1 {
		return classErr(MPI_ERR_PORT, fmt.Sprintf("the port name has %d bytes, more than MPI_MAX_PORT_NAME-1 (%d)", len(name), MPI_MAX_PORT_NAME-1))
	}
	putString(dst, nil, name, MPI_MAX_PORT_NAME)
	return nil
}

func implOpen_port(info uintptr, portName unsafe.Pointer) int32 {
	const fn = "MPI_Open_port"
	if rc := running(fn); rc != 0 {
		return rc
	}
	in, err := infoQuiet("info", info)
	if err != nil {
		return raise(fn, noComm, err)
	}
	if portName == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "port_name is NULL"))
	}
	name, err := mpi.OpenPort(in)
	if err != nil {
		return raise(fn, noComm, err)
	}
	if err := putPortName(portName, name); err != nil {
		mpi.ClosePort(name)
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

func implClose_port(portName unsafe.Pointer) int32 {
	const fn = "MPI_Close_port"
	if rc := running(fn); rc != 0 {
		return rc
	}
	if portName == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "port_name is NULL"))
	}
	if err := mpi.ClosePort(cString(portName)); err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

// acceptConnect is MPI_Comm_accept and MPI_Comm_connect.
func acceptConnect(fn string, portName unsafe.Pointer, info uintptr, root int32, comm uintptr, newcomm unsafe.Pointer,
	do func(c *mpi.Comm, name string, root int) (*mpi.Comm, error)) int32 {
	ce, rc := getComm(fn, comm)
	if ce == nil {
		return rc
	}
	if newcomm == nil {
		return raiseOn(fn, ce, classErr(MPI_ERR_ARG, "newcomm is NULL"))
	}
	var name string
	var bad error
	if !ce.c.IsInter() && int(root) == ce.c.Rank() {
		if portName == nil {
			bad = classErr(MPI_ERR_ARG, "port_name is NULL")
		} else if _, bad = infoQuiet("info", info); bad == nil {
			name = cString(portName)
		}
	}
	// A bad argument at the root leaves name empty, which is no port:
	// every rank fails at once.
	ic, err := do(ce.c, name, int(root))
	if err != nil {
		if bad != nil {
			err = bad
		}
		return raiseOn(fn, ce, err)
	}
	newComm(ce, ic, newcomm)
	return MPI_SUCCESS
}

func implComm_accept(portName unsafe.Pointer, info uintptr, root int32, comm uintptr, newcomm unsafe.Pointer) int32 {
	return acceptConnect("MPI_Comm_accept", portName, info, root, comm, newcomm, func(c *mpi.Comm, name string, root int) (*mpi.Comm, error) {
		return c.CommAccept(name, nil, root)
	})
}

func implComm_connect(portName unsafe.Pointer, info uintptr, root int32, comm uintptr, newcomm unsafe.Pointer) int32 {
	return acceptConnect("MPI_Comm_connect", portName, info, root, comm, newcomm, func(c *mpi.Comm, name string, root int) (*mpi.Comm, error) {
		return c.CommConnect(name, nil, root)
	})
}

// nameArgs checks the arguments of the name service's calls.
func nameArgs(fn string, service unsafe.Pointer, info uintptr, port unsafe.Pointer) (*mpi.Info, int32) {
	if rc := running(fn); rc != 0 {
		return nil, rc
	}
	if service == nil || port == nil {
		return nil, raise(fn, noComm, classErr(MPI_ERR_ARG, "service_name or port_name is NULL"))
	}
	in, err := infoQuiet("info", info)
	if err != nil {
		return nil, raise(fn, noComm, err)
	}
	return in, 0
}

func implPublish_name(service unsafe.Pointer, info uintptr, port unsafe.Pointer) int32 {
	const fn = "MPI_Publish_name"
	in, rc := nameArgs(fn, service, info, port)
	if rc != 0 {
		return rc
	}
	if err := mpi.PublishName(cString(service), in, cString(port)); err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

func implUnpublish_name(service unsafe.Pointer, info uintptr, port unsafe.Pointer) int32 {
	const fn = "MPI_Unpublish_name"
	in, rc := nameArgs(fn, service, info, port)
	if rc != 0 {
		return rc
	}
	if err := mpi.UnpublishName(cString(service), in, cString(port)); err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

func implLookup_name(service unsafe.Pointer, info uintptr, port unsafe.Pointer) int32 {
	const fn = "MPI_Lookup_name"
	in, rc := nameArgs(fn, service, info, port)
	if rc != 0 {
		return rc
	}
	name, err := mpi.LookupName(cString(service), in)
	if err == nil {
		err = putPortName(port, name)
	}
	if err != nil {
		return raise(fn, noComm, err)
	}
	return MPI_SUCCESS
}

// implComm_join joins over the program's socket fd. mpigo reads and
// writes a duplicate of it through Go's network poller, which needs it
// non-blocking: the flag lives in the open file that the program's
// descriptor shares, so the join restores it for the program's later
// reads and writes.
func implComm_join(fd int32, intercomm unsafe.Pointer) int32 {
	const fn = "MPI_Comm_join"
	ce, rc := getComm(fn, MPI_COMM_WORLD)
	if ce == nil {
		return rc
	}
	if intercomm == nil {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, "intercomm is NULL"))
	}
	flags := C.mpigo_fd_flags(C.int(fd))
	if fd < 0 || flags < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("fd %d is not an open descriptor", fd)))
	}
	dup := C.dup(C.int(fd))
	if dup < 0 {
		return raise(fn, noComm, classErr(MPI_ERR_OTHER, fmt.Sprintf("cannot duplicate fd %d", fd)))
	}
	f := os.NewFile(uintptr(dup), "MPI_Comm_join")
	conn, err := net.FileConn(f) // a duplicate of its own
	f.Close()
	if err != nil {
		C.mpigo_fd_set_flags(C.int(fd), flags)
		return raise(fn, noComm, classErr(MPI_ERR_ARG, fmt.Sprintf("fd %d is not a connected socket: %v", fd, err)))
	}
	ic, err := mpi.CommJoin(ce.c, conn)
	conn.Close()
	C.mpigo_fd_set_flags(C.int(fd), flags)
	if err != nil {
		return raise(fn, noComm, err)
	}
	newComm(&self, ic, intercomm)
	return MPI_SUCCESS
}
