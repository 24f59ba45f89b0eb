package mpi_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mpigo/mpi"
)

// The handle sweep (issue 40): every exported method of every exported
// handle type is called with a nil (and, where the type has Free, a
// freed) receiver and zero arguments, by reflection, so a method added
// later is covered without anyone remembering to. None may panic or hang;
// one that returns an error must return an *mpi.Error of a class that
// says what was wrong with the handle. Package-level functions cannot be
// enumerated by reflection: handleFuncs lists them, and
// TestHandleSweepCoversPackage parses the package so that an exported
// function taking a handle that is missing from the list fails the test.

// sweepTypes are the receivers the sweep calls methods on: the nil
// pointer of each handle type (generic ones instantiated with float64),
// and the zero value of each value type with methods.
var sweepTypes = map[string]reflect.Value{
	"Comm":        reflect.ValueOf((*mpi.Comm)(nil)),
	"Group":       reflect.ValueOf((*mpi.Group)(nil)),
	"Datatype":    reflect.ValueOf((*mpi.Datatype)(nil)),
	"Request":     reflect.ValueOf((*mpi.Request)(nil)),
	"Requests":    reflect.ValueOf((*mpi.Requests)(nil)),
	"RequestList": reflect.ValueOf(mpi.RequestList(nil)),
	"Pending":     reflect.ValueOf((*mpi.Pending[float64])(nil)),
	"Future":      reflect.ValueOf((*mpi.Future[float64])(nil)),
	"Message":     reflect.ValueOf((*mpi.Message)(nil)),
	"Window":      reflect.ValueOf((*mpi.Window[float64])(nil)),
	"Info":        reflect.ValueOf((*mpi.Info)(nil)),
	"ErrHandler":  reflect.ValueOf((*mpi.ErrHandler)(nil)),
	"Keyval":      reflect.ValueOf((*mpi.Keyval)(nil)),
	"TypeKeyval":  reflect.ValueOf((*mpi.TypeKeyval)(nil)),
	"ReduceOp":    reflect.ValueOf((*mpi.ReduceOp)(nil)),
	"PvarSession": reflect.ValueOf((*mpi.PvarSession)(nil)),
	"Session":     reflect.ValueOf((*mpi.Session)(nil)),
	"PvarHandle":  reflect.ValueOf((*mpi.PvarHandle)(nil)),
	"Op":          reflect.ValueOf(mpi.Op[float64]{}),
	"Cvar":        reflect.ValueOf(mpi.Cvar{}),
	"Status":      reflect.ValueOf(mpi.Status{}),
	"View":        reflect.ValueOf(mpi.View[float64]{}),
	"File":        reflect.ValueOf((*mpi.File)(nil)),
	"FileIO":      reflect.ValueOf((*mpi.FileIO)(nil)),
	"Executor":    reflect.ValueOf((*mpi.Executor[int, int])(nil)),
	"Task":        reflect.ValueOf((*mpi.Task[int])(nil)),
}

// notHandles are exported types with methods that are not handles: a nil
// *Error is not something the package ever hands out, and the enums'
// String methods take no handle.
var notHandles = map[string]string{
	"Error":        "an error value the package returns, never nil",
	"RankError":    "an error value the package returns, never nil",
	"TaskError":    "an error value the package returns, never nil",
	"Order":        "enum",
	"Distribution": "enum",
	"ThreadLevel":  "enum",
	"PvarClass":    "enum",
	"Bind":         "enum",
	"Verbosity":    "enum",
	"Scope":        "enum",
	"TopoKind":     "enum",
	"Combiner":     "enum",
	"TypeClass":    "enum",
	"Config":       "plain configuration struct",
	"ValueLoc":     "plain pair of values",
	"Range":        "plain triple",
	"PvarInfo":     "plain description",
	"CvarInfo":     "plain description",
	"CategoryInfo": "plain description",
}

// callResult is what one swept call did.
type callResult struct {
	out   []reflect.Value
	panic any
	hung  bool
}

// sweepCall calls m with zero arguments (a variadic parameter gets an
// empty slice), bounded in time so that a call that blocks on a bad
// handle shows as a failure rather than a hung test.
func sweepCall(m reflect.Value) callResult {
	t := m.Type()
	args := make([]reflect.Value, t.NumIn())
	for i := range args {
		args[i] = reflect.Zero(t.In(i))
	}
	done := make(chan callResult, 1)
	go func() {
		var r callResult
		defer func() {
			r.panic = recover()
			done <- r
		}()
		if t.IsVariadic() {
			r.out = m.CallSlice(args)
		} else {
			r.out = m.Call(args)
		}
	}()
	select {
	case r := <-done:
		return r
	case <-time.After(5 * time.Second):
		return callResult{hung: true}
	}
}

// errorOf returns the error a call returned last, and whether it returns one.
func errorOf(out []reflect.Value) (error, bool) {
	if len(out) == 0 {
		return nil, false
	}
	last := out[len(out)-1]
	if last.Type() != reflect.TypeFor[error]() {
		return nil, false
	}
	if last.IsNil() {
		return nil, true
	}
	return last.Interface().(error), true
}

// sweepClasses are the classes an error about a bad handle may have.
var sweepClasses = []error{
	mpi.ErrComm, mpi.ErrGroup, mpi.ErrType, mpi.ErrRequest, mpi.ErrRMASync,
	mpi.ErrArg, mpi.ErrOp, mpi.ErrKeyval, mpi.ErrBuffer, mpi.ErrCount,
	mpi.ErrToolHandle,
}

// checkSweepErr reports err if it is not an *mpi.Error of a class in
// want (any of sweepClasses when want is nil).
func checkSweepErr(t *testing.T, what string, err error, want error) {
	t.Helper()
	var e *mpi.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: error %v (%T) is not an *mpi.Error", what, err, err)
		return
	}
	if want != nil {
		if !errors.Is(err, want) {
			t.Errorf("%s: error %v, want class %v", what, err, want)
		}
		return
	}
	for _, c := range sweepClasses {
		if errors.Is(err, c) {
			return
		}
	}
	t.Errorf("%s: error %v has no handle class", what, err)
}

// nilMustFail are the types whose every error-returning method must fail
// on a nil receiver, with the class given. The others (requests, info,
// ops...) may treat nil as their null value: a nil *Request is
// MPI_REQUEST_NULL, which Wait completes at once.
var nilMustFail = map[string]error{
	"Comm":     mpi.ErrComm,
	"Window":   mpi.ErrArg,
	"Datatype": mpi.ErrType,
	"Group":    mpi.ErrGroup,
	"Message":  mpi.ErrRequest,
	"File":     mpi.ErrFile,
	"FileIO":   mpi.ErrFile,
	"Session":  mpi.ErrSession,
}

// sweep calls every exported method of recv and checks the outcome:
// must, if not nil, is the class every error-returning method must fail
// with; zeroGetters asks methods returning no error to return zero
// values only.
func sweep(t *testing.T, name string, recv reflect.Value, must error, zeroGetters bool, skip map[string]bool) {
	t.Helper()
	rt := recv.Type()
	for i := range rt.NumMethod() {
		meth := rt.Method(i)
		if skip[meth.Name] {
			continue
		}
		what := fmt.Sprintf("%s.%s", name, meth.Name)
		r := sweepCall(recv.Method(i))
		switch {
		case r.hung:
			t.Errorf("%s: did not return in 5s", what)
			continue
		case r.panic != nil:
			t.Errorf("%s: panicked: %v", what, r.panic)
			continue
		}
		err, hasErr := errorOf(r.out)
		switch {
		case hasErr && err != nil:
			checkSweepErr(t, what, err, must)
		case hasErr && must != nil:
			t.Errorf("%s: returned no error, want class %v", what, must)
		case !hasErr && zeroGetters:
			for k, v := range r.out {
				if !isZeroish(v) {
					t.Errorf("%s: result %d is %v, want a zero value", what, k, v)
				}
			}
		}
	}
}

// isZeroish reports whether v is a zero value, or one of the sentinels
// the package documents for a handle that is no more: Undefined for a
// rank, ErrorsReturn for an error handler, an empty slice.
func isZeroish(v reflect.Value) bool {
	if v.IsZero() {
		return true
	}
	if h, ok := v.Interface().(*mpi.ErrHandler); ok {
		return h == mpi.ErrorsReturn
	}
	switch v.Kind() {
	case reflect.Int:
		return v.Int() == mpi.Undefined
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	}
	return false
}

// TestHandleSweepNil calls every exported method of every handle type
// with a nil receiver.
func TestHandleSweepNil(t *testing.T) {
	names := make([]string, 0, len(sweepTypes))
	for n := range sweepTypes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sweep(t, "nil "+n, sweepTypes[n], nilMustFail[n], false, nil)
	}
}

// freedSkip are methods not called on freed handles: Free again is
// covered by the error rule like every call, so nothing is skipped
// today; the map documents where an exception would go.
var freedSkip = map[string]bool{}

// TestHandleSweepFreed calls every exported method of freed handles:
// a communicator, group, datatype, windows, request and Tools session
// after Free, and a message already received. Calls returning an error
// must fail with the class the type's documentation names; a freed
// window's getters answer zero values (docs/rma.md).
func TestHandleSweepFreed(t *testing.T) {
	err := mpi.Run(2, func(world *mpi.Comm) error {
		c, err := world.Dup()
		if err != nil {
			return err
		}
		if err := c.Free(); err != nil {
			return err
		}
		g := world.Group()
		if err := g.Free(); err != nil {
			return err
		}
		dt, err := mpi.NewContiguous(2, mpi.Float64)
		if err != nil {
			return err
		}
		if err := dt.Commit(); err != nil {
			return err
		}
		if err := dt.Free(); err != nil {
			return err
		}
		w, err := mpi.NewWindow[float64](world, 4)
		if err != nil {
			return err
		}
		if err := w.Free(); err != nil {
			return err
		}
		wo, err := mpi.WindowOf(world, make([]float64, 4))
		if err != nil {
			return err
		}
		if err := wo.Free(); err != nil {
			return err
		}
		ses, err := world.SessionInit(nil, nil)
		if err != nil {
			return err
		}
		if err := ses.Finalize(); err != nil {
			return err
		}
		r, err := mpi.Isend(world, 1.0, mpi.ProcNull, 0)
		if err != nil {
			return err
		}
		if err := r.Free(); err != nil {
			return err
		}
		s := mpi.NewPvarSession()
		if err := s.Free(); err != nil {
			return err
		}
		// A message already received is used up, like a freed handle.
		if err := mpi.Send(world, 1.5, world.Rank(), 9); err != nil {
			return err
		}
		m, _, err := world.Mprobe(world.Rank(), 9)
		if err != nil {
			return err
		}
		if _, _, err := mpi.Mrecv[float64](m); err != nil {
			return err
		}
		// A nil set on a valid communicator: ErrRequest, no panic.
		for what, err := range map[string]error{
			"PostIsend":      mpi.PostIsend(nil, world, 1.0, 0, 0),
			"PostIrecvInto":  mpi.PostIrecvInto(nil, world, []float64{0}, 0, 0),
			"Comm.PostIsend": world.PostIsend(nil, nil, 0, mpi.Byte, 0, 0),
			"Comm.PostIrecv": world.PostIrecv(nil, nil, 0, mpi.Byte, 0, 0),
		} {
			checkSweepErr(t, what+" into a nil set", err, mpi.ErrRequest)
		}
		if world.Rank() != 0 {
			return nil
		}
		sweep(t, "freed Comm", reflect.ValueOf(c), mpi.ErrComm, false, freedSkip)
		sweep(t, "freed Group", reflect.ValueOf(g), mpi.ErrGroup, false, freedSkip)
		sweep(t, "freed Datatype", reflect.ValueOf(dt), mpi.ErrType, false, freedSkip)
		sweep(t, "freed NewWindow", reflect.ValueOf(w), mpi.ErrRMASync, true, freedSkip)
		sweep(t, "freed WindowOf", reflect.ValueOf(wo), mpi.ErrRMASync, true, freedSkip)
		sweep(t, "freed Request", reflect.ValueOf(r), nil, false, freedSkip)
		sweep(t, "finalized Session", reflect.ValueOf(ses), mpi.ErrSession, true, freedSkip)
		sweep(t, "freed PvarSession", reflect.ValueOf(s), nil, false, freedSkip)
		sweep(t, "used Message", reflect.ValueOf(m), mpi.ErrRequest, false, freedSkip)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// handleFuncs calls each exported package-level function that takes a
// handle with nil handles (generic ones instantiated with float64). Each
// entry returns the call's error; want is the class it must have (nil:
// any handle class, or no error where nil is a valid null value).
var handleFuncs = map[string]struct {
	call func() error
	want error
}{
	"DeleteFile": {func() error { return mpi.DeleteFile("/nonexistent/mpigo-sweep", nil) }, mpi.ErrNoSuchFile},
	"NewExecutor": {func() error {
		_, err := mpi.NewExecutor(nil, 0, func(context.Context, int) (int, error) { return 0, nil })
		return err
	}, mpi.ErrComm},
	"NewExecutorWith": {func() error {
		_, err := mpi.NewExecutorWith(nil, 0, func(context.Context, int) (int, error) { return 0, nil }, mpi.ExecutorOptions{})
		return err
	}, mpi.ErrComm},
	"SpawnExecutor": {func() error {
		_, err := mpi.SpawnExecutor[int, int](nil, "x", nil, 1, nil, mpi.ExecutorOptions{})
		return err
	}, mpi.ErrComm},
	"ServeExecutor": {func() error {
		return mpi.ServeExecutor(nil, func(context.Context, int) (int, error) { return 0, nil })
	}, mpi.ErrComm},
	"TypeGetValueIndex": {func() error { _, err := mpi.TypeGetValueIndex(nil, mpi.Int); return err }, mpi.ErrType},
	"OpenFile":          {func() error { _, err := mpi.OpenFile(nil, "x", mpi.ModeRdonly, nil); return err }, mpi.ErrComm},
	"WriteAt":           {func() error { _, err := mpi.WriteAt[float64](nil, 0, nil); return err }, mpi.ErrFile},
	"ReadAt":            {func() error { _, err := mpi.ReadAt[float64](nil, 0, nil); return err }, mpi.ErrFile},
	"WriteAtAll":        {func() error { _, err := mpi.WriteAtAll[float64](nil, 0, nil); return err }, mpi.ErrFile},
	"ReadAtAll":         {func() error { _, err := mpi.ReadAtAll[float64](nil, 0, nil); return err }, mpi.ErrFile},
	"WriteShared":       {func() error { _, err := mpi.WriteShared[float64](nil, nil); return err }, mpi.ErrFile},
	"ReadShared":        {func() error { _, err := mpi.ReadShared[float64](nil, nil); return err }, mpi.ErrFile},
	"WriteOrdered":      {func() error { _, err := mpi.WriteOrdered[float64](nil, nil); return err }, mpi.ErrFile},
	"ReadOrdered":       {func() error { _, err := mpi.ReadOrdered[float64](nil, nil); return err }, mpi.ErrFile},
	"SetViewBlock":      {func() error { return mpi.SetViewBlock[float64](nil, 0, nil, nil, nil, "native") }, mpi.ErrFile},
	"Abort":             {func() error { mpi.Abort(nil, 3); return nil }, nil},
	"SendView":          {func() error { return mpi.SendView(nil, mpi.View[float64]{}, 0, 0) }, mpi.ErrArg},
	"IsendView":         {func() error { _, err := mpi.IsendView(nil, mpi.View[float64]{}, 0, 0); return err }, mpi.ErrArg},
	"RecvView":          {func() error { _, err := mpi.RecvView(nil, mpi.Strided([]float64{0}, 1, 1, 1), 0, 0); return err }, mpi.ErrComm},
	"IrecvView":         {func() error { _, err := mpi.IrecvView(nil, mpi.Strided([]float64{0}, 1, 1, 1), 0, 0); return err }, mpi.ErrComm},
	"SendrecvView": {func() error {
		v := mpi.Strided([]float64{0}, 1, 1, 1)
		_, err := mpi.SendrecvView(nil, v, 0, 0, v, 0, 0)
		return err
	}, mpi.ErrComm},
	"BcastView":           {func() error { return mpi.BcastView(nil, mpi.Strided([]float64{0}, 1, 1, 1), 0) }, mpi.ErrComm},
	"GatherView":          {func() error { return mpi.GatherView(nil, mpi.Strided([]float64{0}, 1, 1, 1), nil, 0) }, mpi.ErrComm},
	"ScatterView":         {func() error { return mpi.ScatterView(nil, nil, mpi.Strided([]float64{0}, 1, 1, 1), 0) }, mpi.ErrComm},
	"AllgatherView":       {func() error { return mpi.AllgatherView(nil, mpi.View[float64]{}, nil) }, mpi.ErrArg},
	"ViewOf":              {func() error { return mpi.ViewOf([]float64{0}, nil).Err() }, mpi.ErrType},
	"AllgatherInto":       {func() error { return mpi.AllgatherInto[float64](nil, nil, nil) }, mpi.ErrComm},
	"Allgather":           {func() error { _, err := mpi.Allgather(nil, 1.0); return err }, mpi.ErrComm},
	"Allreduce":           {func() error { _, err := mpi.Allreduce(nil, 1.0, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"AllreduceSlice":      {func() error { _, err := mpi.AllreduceSlice(nil, []float64{1}, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"AllreduceSliceInto":  {func() error { return mpi.AllreduceSliceInto(nil, []float64{1}, []float64{0}, mpi.Sum[float64]()) }, mpi.ErrComm},
	"Alltoall":            {func() error { _, err := mpi.Alltoall(nil, []float64{1}); return err }, mpi.ErrComm},
	"AlltoallInto":        {func() error { return mpi.AlltoallInto(nil, []float64{1}, []float64{0}) }, mpi.ErrComm},
	"Barrier":             {func() error { return mpi.Barrier(nil) }, mpi.ErrComm},
	"Bcast":               {func() error { _, err := mpi.Bcast(nil, 1.0, 0); return err }, mpi.ErrComm},
	"BcastInto":           {func() error { return mpi.BcastInto(nil, []float64{1}, 0) }, mpi.ErrComm},
	"Bsend":               {func() error { return mpi.Bsend(nil, 1.0, 0, 0) }, mpi.ErrComm},
	"CompareComms":        {func() error { mpi.CompareComms(nil, nil); return nil }, nil},
	"InfoCreateEnv":       {func() error { _, err := mpi.InfoCreateEnv(nil, nil); return err }, nil},
	"CommCreateFromGroup": {func() error { _, err := mpi.CommCreateFromGroup(nil, "t", nil, nil); return err }, mpi.ErrGroup},
	"IntercommCreateFromGroups": {func() error {
		_, err := mpi.IntercommCreateFromGroups(nil, 0, nil, 0, "t", nil, nil)
		return err
	}, mpi.ErrGroup},
	// A nil info and handler are valid (they would start a singleton
	// rank in this process): a communicator's handler is the bad input.
	"SessionInit":     {func() error { _, err := mpi.SessionInit(nil, mpi.NewErrHandler(func(*mpi.Comm, error) {})); return err }, mpi.ErrArg},
	"CompareGroups":   {func() error { mpi.CompareGroups(nil, nil); return nil }, nil},
	"DatatypeOf":      {func() error { _, err := mpi.DatatypeOf[float64](); return err }, nil},
	"Exscan":          {func() error { _, err := mpi.Exscan(nil, 1.0, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"FreeKeyval":      {func() error { return mpi.FreeKeyval(nil) }, mpi.ErrKeyval},
	"FreeTypeKeyval":  {func() error { return mpi.FreeTypeKeyval(nil) }, mpi.ErrKeyval},
	"Gather":          {func() error { _, err := mpi.Gather(nil, 1.0, 0); return err }, mpi.ErrComm},
	"Iallgather":      {func() error { _, err := mpi.Iallgather(nil, 1.0); return err }, mpi.ErrComm},
	"Iallreduce":      {func() error { _, err := mpi.Iallreduce(nil, 1.0, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"IallreduceSlice": {func() error { _, err := mpi.IallreduceSlice(nil, []float64{1}, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"Ialltoall":       {func() error { _, err := mpi.Ialltoall(nil, []float64{1}); return err }, mpi.ErrComm},
	"Ibarrier":        {func() error { _, err := mpi.Ibarrier(nil); return err }, mpi.ErrComm},
	"BarrierInit":     {func() error { _, err := mpi.BarrierInit(nil); return err }, mpi.ErrComm},
	"BcastInit":       {func() error { _, err := mpi.BcastInit(nil, []float64{1}, 0); return err }, mpi.ErrComm},
	"AllreduceInit": {func() error {
		_, err := mpi.AllreduceInit(nil, []float64{1}, []float64{1}, mpi.Sum[float64]())
		return err
	}, mpi.ErrComm},
	"ReduceInit": {func() error {
		_, err := mpi.ReduceInit(nil, []float64{1}, []float64{1}, mpi.Sum[float64](), 0)
		return err
	}, mpi.ErrComm},
	"AllgatherInit": {func() error { _, err := mpi.AllgatherInit(nil, []float64{1}, []float64{1}); return err }, mpi.ErrComm},
	"AlltoallInit":  {func() error { _, err := mpi.AlltoallInit(nil, []float64{1}, []float64{1}); return err }, mpi.ErrComm},
	"ReduceScatterBlockInit": {func() error {
		_, err := mpi.ReduceScatterBlockInit(nil, []float64{1}, []float64{1}, mpi.Sum[float64]())
		return err
	}, mpi.ErrComm},
	"ScanInit":           {func() error { _, err := mpi.ScanInit(nil, []float64{1}, []float64{1}, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"PsendInit":          {func() error { _, err := mpi.PsendInit(nil, []float64{1}, 1, 0, 0); return err }, mpi.ErrComm},
	"PrecvInit":          {func() error { _, err := mpi.PrecvInit(nil, []float64{1}, 1, 0, 0); return err }, mpi.ErrComm},
	"IsendrecvInto":      {func() error { _, err := mpi.IsendrecvInto(nil, 1.0, 0, 0, []float64{1}, 0, 0); return err }, mpi.ErrComm},
	"Ibcast":             {func() error { _, err := mpi.Ibcast(nil, 1.0, 0); return err }, mpi.ErrComm},
	"Iexscan":            {func() error { _, err := mpi.Iexscan(nil, 1.0, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"Igather":            {func() error { _, err := mpi.Igather(nil, 1.0, 0); return err }, mpi.ErrComm},
	"IneighborAllgather": {func() error { _, err := mpi.IneighborAllgather(nil, 1.0); return err }, mpi.ErrComm},
	"IneighborAlltoall":  {func() error { _, err := mpi.IneighborAlltoall(nil, []float64{1}); return err }, mpi.ErrComm},
	"IntercommCreate":    {func() error { _, err := mpi.IntercommCreate(nil, 0, nil, 0, 0); return err }, mpi.ErrComm},
	"CommJoin":           {func() error { _, err := mpi.CommJoin(nil, nil); return err }, mpi.ErrComm},
	// A nil *Info is no info: the calls go on.
	"OpenPort": {func() error {
		p, err := mpi.OpenPort(nil)
		if err == nil {
			err = mpi.ClosePort(p)
		}
		return err
	}, nil},
	"PublishName": {func() error {
		p, err := mpi.OpenPort(nil)
		if err != nil {
			return err
		}
		defer mpi.ClosePort(p)
		if err := mpi.PublishName("nilhandle-sweep", nil, p); err != nil {
			return err
		}
		if _, err := mpi.LookupName("nilhandle-sweep", nil); err != nil {
			return err
		}
		return mpi.UnpublishName("nilhandle-sweep", nil, p)
	}, nil},
	"LookupName": {func() error {
		if _, err := mpi.LookupName("nilhandle-none", nil); !errors.Is(err, mpi.ErrName) {
			return fmt.Errorf("LookupName of a name never published: %v, want ErrName", err)
		}
		return nil
	}, nil},
	"UnpublishName": {func() error {
		if err := mpi.UnpublishName("nilhandle-none", nil, "x"); !errors.Is(err, mpi.ErrService) {
			return fmt.Errorf("UnpublishName of a name never published: %v, want ErrService", err)
		}
		return nil
	}, nil},
	"Ireduce": {func() error { _, err := mpi.Ireduce(nil, 1.0, mpi.Sum[float64](), 0); return err }, mpi.ErrComm},
	"IreduceScatter": {func() error {
		_, err := mpi.IreduceScatter(nil, []float64{1}, []int{1}, mpi.Sum[float64]())
		return err
	}, mpi.ErrComm},
	"IreduceScatterBlock": {func() error { _, err := mpi.IreduceScatterBlock(nil, []float64{1}, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"IreduceSlice":        {func() error { _, err := mpi.IreduceSlice(nil, []float64{1}, mpi.Sum[float64](), 0); return err }, mpi.ErrComm},
	"Irecv":               {func() error { _, err := mpi.Irecv[float64](nil, 0, 0); return err }, mpi.ErrComm},
	"IrecvInto":           {func() error { _, err := mpi.IrecvInto(nil, []float64{0}, 0, 0); return err }, mpi.ErrComm},
	"Iscan":               {func() error { _, err := mpi.Iscan(nil, 1.0, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"Iscatter":            {func() error { _, err := mpi.Iscatter(nil, []float64{1}, 0); return err }, mpi.ErrComm},
	"Isend":               {func() error { _, err := mpi.Isend(nil, 1.0, 0, 0); return err }, mpi.ErrComm},
	"Issend":              {func() error { _, err := mpi.Issend(nil, 1.0, 0, 0); return err }, mpi.ErrComm},
	"Mprobe":              {func() error { _, _, err := mpi.Mprobe(nil, 0, 0); return err }, mpi.ErrComm},
	"Mrecv":               {func() error { _, _, err := mpi.Mrecv[float64](nil); return err }, mpi.ErrRequest},
	"NeighborAllgather":   {func() error { _, err := mpi.NeighborAllgather(nil, 1.0); return err }, mpi.ErrComm},
	"NeighborAlltoall":    {func() error { _, err := mpi.NeighborAlltoall(nil, []float64{1}); return err }, mpi.ErrComm},
	"NewContiguous":       {func() error { _, err := mpi.NewContiguous(1, nil); return err }, mpi.ErrType},
	"NewDarray": {func() error {
		_, err := mpi.NewDarray(1, 0, []int{1}, []mpi.Distribution{mpi.DistributeNone}, []int{0}, []int{1}, mpi.OrderC, nil)
		return err
	}, mpi.ErrType},
	"NewDynamicWindow":       {func() error { _, err := mpi.NewDynamicWindow[float64](nil); return err }, mpi.ErrComm},
	"NewErrHandler":          {func() error { mpi.NewErrHandler(nil); return nil }, nil},
	"NewHindexed":            {func() error { _, err := mpi.NewHindexed([]int{1}, []int{0}, nil); return err }, mpi.ErrType},
	"NewHindexedBlock":       {func() error { _, err := mpi.NewHindexedBlock(1, []int{0}, nil); return err }, mpi.ErrType},
	"NewHvector":             {func() error { _, err := mpi.NewHvector(1, 1, 1, nil); return err }, mpi.ErrType},
	"NewIndexed":             {func() error { _, err := mpi.NewIndexed([]int{1}, []int{0}, nil); return err }, mpi.ErrType},
	"NewIndexedBlock":        {func() error { _, err := mpi.NewIndexedBlock(1, []int{0}, nil); return err }, mpi.ErrType},
	"NewReduceOp":            {func() error { mpi.NewReduceOp(nil, true); return nil }, nil},
	"NewResized":             {func() error { _, err := mpi.NewResized(nil, 0, 1); return err }, mpi.ErrType},
	"NewStruct":              {func() error { _, err := mpi.NewStruct([]int{1}, []int{0}, []*mpi.Datatype{nil}); return err }, mpi.ErrType},
	"NewSubarray":            {func() error { _, err := mpi.NewSubarray([]int{1}, []int{1}, []int{0}, mpi.OrderC, nil); return err }, mpi.ErrType},
	"NewVector":              {func() error { _, err := mpi.NewVector(1, 1, 1, nil); return err }, mpi.ErrType},
	"NewWindow":              {func() error { _, err := mpi.NewWindow[float64](nil, 1); return err }, mpi.ErrComm},
	"NewSharedWindow":        {func() error { _, err := mpi.NewSharedWindow[float64](nil, 1); return err }, mpi.ErrComm},
	"Pack":                   {func() error { _, err := mpi.Pack(nil, 1, nil, nil, 0); return err }, mpi.ErrType},
	"PackExternal":           {func() error { _, err := mpi.PackExternal(nil, 1, nil, nil, 0); return err }, mpi.ErrType},
	"PackExternalSize":       {func() error { _, err := mpi.PackExternalSize(1, nil); return err }, mpi.ErrType},
	"PackSize":               {func() error { _, err := mpi.PackSize(1, nil); return err }, mpi.ErrType},
	"PostIrecvInto":          {func() error { return mpi.PostIrecvInto(nil, nil, []float64{0}, 0, 0) }, mpi.ErrComm},
	"PostIrecvIntoNilComm":   {func() error { return mpi.PostIrecvInto(&mpi.Requests{}, nil, []float64{0}, 0, 0) }, mpi.ErrComm},
	"PostIsend":              {func() error { return mpi.PostIsend(nil, nil, 1.0, 0, 0) }, mpi.ErrComm},
	"PostIsendNilComm":       {func() error { return mpi.PostIsend(&mpi.Requests{}, nil, 1.0, 0, 0) }, mpi.ErrComm},
	"Probe":                  {func() error { _, err := mpi.Probe(nil, 0, 0); return err }, mpi.ErrComm},
	"Recv":                   {func() error { _, _, err := mpi.Recv[float64](nil, 0, 0); return err }, mpi.ErrComm},
	"RecvInto":               {func() error { _, err := mpi.RecvInto(nil, []float64{0}, 0, 0); return err }, mpi.ErrComm},
	"Reduce":                 {func() error { _, err := mpi.Reduce(nil, 1.0, mpi.Sum[float64](), 0); return err }, mpi.ErrComm},
	"ReduceLocal":            {func() error { return mpi.ReduceLocal(nil, nil, 1, nil, nil) }, nil},
	"ReduceScatter":          {func() error { _, err := mpi.ReduceScatter(nil, []float64{1}, []int{1}, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"ReduceScatterBlock":     {func() error { _, err := mpi.ReduceScatterBlock(nil, []float64{1}, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"ReduceScatterBlockInto": {func() error { return mpi.ReduceScatterBlockInto(nil, []float64{1}, []float64{0}, mpi.Sum[float64]()) }, mpi.ErrComm},
	"ReduceSlice":            {func() error { _, err := mpi.ReduceSlice(nil, []float64{1}, mpi.Sum[float64](), 0); return err }, mpi.ErrComm},
	"ReduceSliceInto":        {func() error { return mpi.ReduceSliceInto(nil, []float64{1}, []float64{0}, mpi.Sum[float64](), 0) }, mpi.ErrComm},
	"Rsend":                  {func() error { return mpi.Rsend(nil, 1.0, 0, 0) }, mpi.ErrComm},
	"Scan":                   {func() error { _, err := mpi.Scan(nil, 1.0, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"ScanSlice":              {func() error { _, err := mpi.ScanSlice(nil, []float64{1}, mpi.Sum[float64]()); return err }, mpi.ErrComm},
	"ScanSliceInto":          {func() error { return mpi.ScanSliceInto(nil, []float64{1}, []float64{0}, mpi.Sum[float64]()) }, mpi.ErrComm},
	"Scatter":                {func() error { _, err := mpi.Scatter(nil, []float64{1}, 0); return err }, mpi.ErrComm},
	"Send":                   {func() error { return mpi.Send(nil, 1.0, 0, 0) }, mpi.ErrComm},
	"Sendrecv":               {func() error { _, _, err := mpi.Sendrecv[float64](nil, 1.0, 0, 0, 0, 0); return err }, mpi.ErrComm},
	"SendrecvInto":           {func() error { _, err := mpi.SendrecvInto(nil, 1.0, 0, 0, []float64{0}, 0, 0); return err }, mpi.ErrComm},
	"Ssend":                  {func() error { return mpi.Ssend(nil, 1.0, 0, 0) }, mpi.ErrComm},
	"StartAll":               {func() error { return mpi.StartAll(nil, nil) }, nil},
	"TopoTest":               {func() error { _, err := mpi.TopoTest(nil); return err }, mpi.ErrComm},
	"UnpackExternal":         {func() error { _, err := mpi.UnpackExternal(nil, 0, nil, 1, nil); return err }, mpi.ErrType},
	"Unpack":                 {func() error { _, err := mpi.Unpack(nil, 0, nil, 1, nil); return err }, mpi.ErrType},
	"TestAll":                {func() error { _, _, err := mpi.TestAll(nil, (*mpi.Request)(nil)); return err }, nil},
	"TestAny":                {func() error { _, _, _, err := mpi.TestAny(nil, (*mpi.Request)(nil)); return err }, nil},
	"TestSome":               {func() error { _, _, err := mpi.TestSome(nil, (*mpi.Request)(nil)); return err }, nil},
	"WaitAllStatus":          {func() error { _, err := mpi.WaitAllStatus(nil, (*mpi.Request)(nil)); return err }, nil},
	"WaitAny":                {func() error { _, _, err := mpi.WaitAny(nil, (*mpi.Request)(nil)); return err }, nil},
	"WaitSome":               {func() error { _, _, err := mpi.WaitSome(nil, (*mpi.Request)(nil)); return err }, nil},
	"WaitAll":                {func() error { return mpi.WaitAll(nil, (*mpi.Request)(nil), (*mpi.Pending[float64])(nil)) }, nil},
	"WindowOf":               {func() error { _, err := mpi.WindowOf[float64](nil, nil); return err }, mpi.ErrComm},
}

// TestHandleSweepFuncs calls the package-level functions of handleFuncs
// with nil handles.
func TestHandleSweepFuncs(t *testing.T) {
	names := make([]string, 0, len(handleFuncs))
	for n := range handleFuncs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := handleFuncs[n]
		var err error
		var p any
		func() {
			defer func() { p = recover() }()
			err = f.call()
		}()
		switch {
		case p != nil:
			t.Errorf("%s with nil handles: panicked: %v", n, p)
		case err != nil:
			checkSweepErr(t, n, err, f.want)
		case f.want != nil:
			t.Errorf("%s with nil handles: no error, want class %v", n, f.want)
		}
	}
}

// handleNames are the handle types whose appearance in a parameter makes
// a package-level function one handleFuncs must list.
var handleNames = map[string]bool{
	"Comm": true, "Group": true, "Datatype": true, "Request": true, "Requests": true,
	"Pending": true, "Future": true, "Message": true, "Window": true, "Info": true,
	"ErrHandler": true, "Keyval": true, "TypeKeyval": true, "ReduceOp": true,
	"PvarSession": true, "PvarHandle": true, "Waiter": true, "File": true,
}

// notSwept are exported functions taking a handle that the sweep does
// not call with nil, and why.
var notSwept = map[string]string{
	"Main":      "takes the rank function, not a handle; it exits the process",
	"Run":       "takes the rank function, not a handle",
	"RunConfig": "takes the rank function, not a handle",
}

// takesHandle reports whether a parameter type names a handle: *H, []*H,
// ...*H, H[...] or the Waiter interface, at its top level (a callback
// whose own parameters are handles does not count).
func takesHandle(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return handleNames[x.Name]
	case *ast.StarExpr:
		return takesHandle(x.X)
	case *ast.ArrayType:
		return takesHandle(x.Elt)
	case *ast.Ellipsis:
		return takesHandle(x.Elt)
	case *ast.IndexExpr:
		return takesHandle(x.X)
	case *ast.IndexListExpr:
		return takesHandle(x.X)
	}
	return false
}

// TestHandleSweepCoversPackage parses the package and fails for an
// exported function taking a handle that handleFuncs does not call, and
// for an exported type with methods that sweepTypes does not sweep: the
// sweep covers what is added later, or this test says what to add.
func TestHandleSweepCoversPackage(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name.Name == "mpi" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		t.Fatal("package mpi not found")
	}
	withMethods := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			if fd.Recv != nil {
				rt := fd.Recv.List[0].Type
				if s, ok := rt.(*ast.StarExpr); ok {
					rt = s.X
				}
				switch x := rt.(type) {
				case *ast.IndexExpr:
					rt = x.X
				case *ast.IndexListExpr:
					rt = x.X
				}
				if id, ok := rt.(*ast.Ident); ok && id.IsExported() {
					withMethods[id.Name] = true
				}
				continue
			}
			handle := false
			for _, p := range fd.Type.Params.List {
				handle = handle || takesHandle(p.Type)
			}
			if !handle {
				continue
			}
			if _, ok := handleFuncs[fd.Name.Name]; ok {
				continue
			}
			if _, ok := notSwept[fd.Name.Name]; ok {
				continue
			}
			t.Errorf("%s (%s) takes a handle but handleFuncs does not call it with nil handles", fd.Name.Name, fset.Position(fd.Pos()))
		}
	}
	for n := range withMethods {
		if _, ok := sweepTypes[n]; ok {
			continue
		}
		if _, ok := notHandles[n]; ok {
			continue
		}
		t.Errorf("exported type %s has methods but sweepTypes does not sweep it", n)
	}
}

// quietProfiler is a Profiler that records nothing: with one set, every
// call evaluates its hook's arguments (the communicator of a request, a
// message, a set), which must be as nil-safe as the call itself.
type quietProfiler struct{}

func (quietProfiler) Enter(*mpi.Call)       {}
func (quietProfiler) Exit(*mpi.Call, error) {}
func (quietProfiler) Pcontrol(int)          {}

// TestHandleSweepNilProfiled is TestHandleSweepNil and
// TestHandleSweepFuncs with a Profiler set.
func TestHandleSweepNilProfiled(t *testing.T) {
	old := mpi.SetProfiler(quietProfiler{})
	defer mpi.SetProfiler(old)
	TestHandleSweepNil(t)
	TestHandleSweepFuncs(t)
}
