package mpi

// Non-blocking and split collective data access (MPI-4.1 sections
// 14.4.2-14.4.5). A non-blocking call returns a generalized request that
// Wait, Test and the request lists complete like any other. Independent
// ones run on a goroutine of their own at once; collective ones run on
// the file's queue, after the collectives this rank started before
// them, so every rank meets the others in program order.

// startAccess starts fn and returns the request it completes.
func (f *File) startAccess(op string, collective bool, fn func() (Status, error)) (*Request, error) {
	if err := f.check(op); err != nil {
		return nil, err
	}
	var st Status
	var ferr error
	req, err := f.comm.GrequestStart(func(s *Status) error {
		*s = st
		return ferr
	}, nil, nil)
	if err != nil {
		return nil, f.handle(err)
	}
	run := func() {
		st, ferr = fn()
		if collective { // the independent calls ran the handler already
			ferr = f.handle(ferr)
		}
		_ = req.GrequestComplete()
	}
	if !collective {
		go run()
		return req, nil
	}
	if err := f.q.start(run); err != nil {
		return nil, f.fail(op, ErrFile, nil, "the file is closed")
	}
	return req, nil
}

// IreadAt starts a ReadAt (MPI_File_iread_at). buf must not be touched
// until the request completes.
func (f *File) IreadAt(off int64, buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.IreadAt", nil, Undefined, Undefined), &err)
	}

	return f.startAccess("IreadAt", false, func() (Status, error) { return f.explicit("IreadAt", false, off, buf, count, dt) })
}

// IwriteAt starts a WriteAt (MPI_File_iwrite_at).
func (f *File) IwriteAt(off int64, buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.IwriteAt", nil, Undefined, Undefined), &err)
	}

	return f.startAccess("IwriteAt", false, func() (Status, error) { return f.explicit("IwriteAt", true, off, buf, count, dt) })
}

// Iread starts a Read at the individual pointer (MPI_File_iread); the
// pointer moves when the read is done.
func (f *File) Iread(buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Iread", nil, Undefined, Undefined), &err)
	}

	return f.startAccess("Iread", false, func() (Status, error) { return f.viaPointer("Iread", false, buf, count, dt) })
}

// Iwrite starts a Write at the individual pointer (MPI_File_iwrite).
func (f *File) Iwrite(buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.Iwrite", nil, Undefined, Undefined), &err)
	}

	return f.startAccess("Iwrite", false, func() (Status, error) { return f.viaPointer("Iwrite", true, buf, count, dt) })
}

// IreadShared starts a ReadShared (MPI_File_iread_shared).
func (f *File) IreadShared(buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.IreadShared", nil, Undefined, Undefined), &err)
	}

	return f.startAccess("IreadShared", false, func() (Status, error) { return f.viaShared("IreadShared", false, buf, count, dt) })
}

// IwriteShared starts a WriteShared (MPI_File_iwrite_shared).
func (f *File) IwriteShared(buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.IwriteShared", nil, Undefined, Undefined), &err)
	}

	return f.startAccess("IwriteShared", false, func() (Status, error) { return f.viaShared("IwriteShared", true, buf, count, dt) })
}

// IreadAtAll starts a ReadAtAll (MPI_File_iread_at_all).
func (f *File) IreadAtAll(off int64, buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.IreadAtAll", nil, Undefined, Undefined), &err)
	}

	return f.startAccess("IreadAtAll", true, func() (Status, error) {
		return f.collAccess("IreadAtAll", false, atOffset, off, buf, count, dt)
	})
}

// IwriteAtAll starts a WriteAtAll (MPI_File_iwrite_at_all).
func (f *File) IwriteAtAll(off int64, buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.IwriteAtAll", nil, Undefined, Undefined), &err)
	}

	return f.startAccess("IwriteAtAll", true, func() (Status, error) {
		return f.collAccess("IwriteAtAll", true, atOffset, off, buf, count, dt)
	})
}

// IreadAll starts a ReadAll (MPI_File_iread_all).
func (f *File) IreadAll(buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.IreadAll", nil, Undefined, Undefined), &err)
	}

	return f.startAccess("IreadAll", true, func() (Status, error) {
		return f.collAccess("IreadAll", false, atPointer, 0, buf, count, dt)
	})
}

// IwriteAll starts a WriteAll (MPI_File_iwrite_all).
func (f *File) IwriteAll(buf []byte, count int, dt *Datatype) (_ *Request, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.IwriteAll", nil, Undefined, Undefined), &err)
	}

	return f.startAccess("IwriteAll", true, func() (Status, error) {
		return f.collAccess("IwriteAll", true, atPointer, 0, buf, count, dt)
	})
}

// begin starts a split collective; only one may be active per file.
func (f *File) begin(op string, write bool, kind posKind, off int64, buf []byte, count int, dt *Datatype) error {
	if err := f.check(op); err != nil {
		return err
	}
	f.mu.Lock()
	busy := f.split != nil
	f.mu.Unlock()
	if busy {
		return f.fail(op, ErrArg, nil, "a split collective is active on this file already (call its End first)")
	}
	req, err := f.startAccess(op, true, func() (Status, error) { return f.collAccess(op, write, kind, off, buf, count, dt) })
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.split = req
	f.mu.Unlock()
	return nil
}

// end completes the split collective begun.
func (f *File) end(op string) (Status, error) {
	if err := f.check(op); err != nil {
		return Status{}, err
	}
	f.mu.Lock()
	req := f.split
	f.split = nil
	f.mu.Unlock()
	if req == nil {
		return Status{}, f.fail(op, ErrArg, nil, "no split collective is active on this file")
	}
	return req.Wait()
}

// ReadAtAllBegin begins a split ReadAtAll (MPI_File_read_at_all_begin).
func (f *File) ReadAtAllBegin(off int64, buf []byte, count int, dt *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadAtAllBegin", nil, Undefined, Undefined), &err)
	}

	return f.begin("ReadAtAllBegin", false, atOffset, off, buf, count, dt)
}

// ReadAtAllEnd ends it (MPI_File_read_at_all_end); buf is the one Begin was given.
func (f *File) ReadAtAllEnd(buf []byte) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadAtAllEnd", nil, Undefined, Undefined), &err)
	}
	return f.end("ReadAtAllEnd")
}

// WriteAtAllBegin begins a split WriteAtAll (MPI_File_write_at_all_begin).
func (f *File) WriteAtAllBegin(off int64, buf []byte, count int, dt *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteAtAllBegin", nil, Undefined, Undefined), &err)
	}

	return f.begin("WriteAtAllBegin", true, atOffset, off, buf, count, dt)
}

// WriteAtAllEnd ends it (MPI_File_write_at_all_end).
func (f *File) WriteAtAllEnd(buf []byte) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteAtAllEnd", nil, Undefined, Undefined), &err)
	}
	return f.end("WriteAtAllEnd")
}

// ReadAllBegin begins a split ReadAll (MPI_File_read_all_begin).
func (f *File) ReadAllBegin(buf []byte, count int, dt *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadAllBegin", nil, Undefined, Undefined), &err)
	}

	return f.begin("ReadAllBegin", false, atPointer, 0, buf, count, dt)
}

// ReadAllEnd ends it (MPI_File_read_all_end).
func (f *File) ReadAllEnd(buf []byte) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadAllEnd", nil, Undefined, Undefined), &err)
	}
	return f.end("ReadAllEnd")
}

// WriteAllBegin begins a split WriteAll (MPI_File_write_all_begin).
func (f *File) WriteAllBegin(buf []byte, count int, dt *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteAllBegin", nil, Undefined, Undefined), &err)
	}

	return f.begin("WriteAllBegin", true, atPointer, 0, buf, count, dt)
}

// WriteAllEnd ends it (MPI_File_write_all_end).
func (f *File) WriteAllEnd(buf []byte) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteAllEnd", nil, Undefined, Undefined), &err)
	}
	return f.end("WriteAllEnd")
}

// ReadOrderedBegin begins a split ReadOrdered (MPI_File_read_ordered_begin).
func (f *File) ReadOrderedBegin(buf []byte, count int, dt *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadOrderedBegin", nil, Undefined, Undefined), &err)
	}

	return f.begin("ReadOrderedBegin", false, atShared, 0, buf, count, dt)
}

// ReadOrderedEnd ends it (MPI_File_read_ordered_end).
func (f *File) ReadOrderedEnd(buf []byte) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.ReadOrderedEnd", nil, Undefined, Undefined), &err)
	}
	return f.end("ReadOrderedEnd")
}

// WriteOrderedBegin begins a split WriteOrdered (MPI_File_write_ordered_begin).
func (f *File) WriteOrderedBegin(buf []byte, count int, dt *Datatype) (err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteOrderedBegin", nil, Undefined, Undefined), &err)
	}

	return f.begin("WriteOrderedBegin", true, atShared, 0, buf, count, dt)
}

// WriteOrderedEnd ends it (MPI_File_write_ordered_end).
func (f *File) WriteOrderedEnd(buf []byte) (_ Status, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("File.WriteOrderedEnd", nil, Undefined, Undefined), &err)
	}
	return f.end("WriteOrderedEnd")
}
