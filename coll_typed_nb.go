package mpi

// The typed non-blocking collectives: each starts its blocking form on a
// pinned view of the communicator (coll_nb.go) and returns a Future.

// Ibcast starts a Bcast (MPI_Ibcast); the Future's Wait returns root's v.
func Ibcast[T any](c *Comm, v T, root int) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Ibcast", c, root, Undefined), &err)
	}
	return startFuture(c, "Ibcast", func(vc *Comm) (T, error) { return Bcast(vc, v, root) })
}

// Ireduce starts a Reduce (MPI_Ireduce).
func Ireduce[T any](c *Comm, v T, op Op[T], root int) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Ireduce", c, root, Undefined), &err)
	}
	return startFuture(c, "Ireduce", func(vc *Comm) (T, error) { return Reduce(vc, v, op, root) })
}

// Iallreduce starts an Allreduce (MPI_Iallreduce).
func Iallreduce[T any](c *Comm, v T, op Op[T]) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Iallreduce", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "Iallreduce", func(vc *Comm) (T, error) { return Allreduce(vc, v, op) })
}

// IreduceSlice starts a ReduceSlice (MPI_Ireduce with a count). v must not
// be modified until the Future completes.
func IreduceSlice[E any](c *Comm, v []E, op Op[E], root int) (_ *Future[[]E], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IreduceSlice", c, root, Undefined), &err)
	}
	return startFuture(c, "IreduceSlice", func(vc *Comm) ([]E, error) { return ReduceSlice(vc, v, op, root) })
}

// IallreduceSlice starts an AllreduceSlice (MPI_Iallreduce with a count).
// v must not be modified until the Future completes.
func IallreduceSlice[E any](c *Comm, v []E, op Op[E]) (_ *Future[[]E], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IallreduceSlice", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "IallreduceSlice", func(vc *Comm) ([]E, error) { return AllreduceSlice(vc, v, op) })
}

// IreduceScatterBlock starts a ReduceScatterBlock (MPI_Ireduce_scatter_block).
func IreduceScatterBlock[E any](c *Comm, v []E, op Op[E]) (_ *Future[[]E], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IreduceScatterBlock", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "IreduceScatterBlock", func(vc *Comm) ([]E, error) { return ReduceScatterBlock(vc, v, op) })
}

// IreduceScatter starts a ReduceScatter (MPI_Ireduce_scatter).
func IreduceScatter[E any](c *Comm, v []E, counts []int, op Op[E]) (_ *Future[[]E], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("IreduceScatter", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "IreduceScatter", func(vc *Comm) ([]E, error) { return ReduceScatter(vc, v, counts, op) })
}

// Igather starts a Gather (MPI_Igather, MPI_Igatherv).
func Igather[T any](c *Comm, v T, root int) (_ *Future[[]T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Igather", c, root, Undefined), &err)
	}
	return startFuture(c, "Igather", func(vc *Comm) ([]T, error) { return Gather(vc, v, root) })
}

// Iallgather starts an Allgather (MPI_Iallgather, MPI_Iallgatherv).
func Iallgather[T any](c *Comm, v T) (_ *Future[[]T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Iallgather", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "Iallgather", func(vc *Comm) ([]T, error) { return Allgather(vc, v) })
}

// Iscatter starts a Scatter (MPI_Iscatter, MPI_Iscatterv).
func Iscatter[T any](c *Comm, vs []T, root int) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Iscatter", c, root, Undefined), &err)
	}
	return startFuture(c, "Iscatter", func(vc *Comm) (T, error) { return Scatter(vc, vs, root) })
}

// Ialltoall starts an Alltoall (MPI_Ialltoall, MPI_Ialltoallv).
func Ialltoall[T any](c *Comm, vs []T) (_ *Future[[]T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Ialltoall", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "Ialltoall", func(vc *Comm) ([]T, error) { return Alltoall(vc, vs) })
}

// Iscan starts a Scan (MPI_Iscan).
func Iscan[T any](c *Comm, v T, op Op[T]) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Iscan", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "Iscan", func(vc *Comm) (T, error) { return Scan(vc, v, op) })
}

// Iexscan starts an Exscan (MPI_Iexscan); rank 0's result is the zero
// value.
func Iexscan[T any](c *Comm, v T, op Op[T]) (_ *Future[T], err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Iexscan", c, Undefined, Undefined), &err)
	}
	return startFuture(c, "Iexscan", func(vc *Comm) (T, error) { return Exscan(vc, v, op) })
}
