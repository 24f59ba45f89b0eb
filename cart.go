package mpi

// Cartesian topologies (MPI-3.1 §7.5.1, §7.5.5, §7.5.6). Ranks are laid
// out on the grid in row-major order: the last dimension varies fastest,
// so rank r has coordinates (r / (d1·…·dn-1), …, r mod dn-1), as in MPI.

// cartTopo builds the Cartesian topology of rank in a grid of dims.
func cartTopo(dims []int, periods []bool, rank int) *topology {
	t := &topology{kind: Cart, dims: dims, periods: periods, coords: cartCoords(dims, rank)}
	n := len(dims)
	t.in, t.out = make([]int, 2*n), make([]int, 2*n)
	t.inTag, t.outTag = make([]int, 2*n), make([]int, 2*n)
	t.sendOrder = make([]int, 0, 2*n)
	for d := range n {
		src, dst := t.shift(d, 1)
		t.in[2*d], t.in[2*d+1] = src, dst
		t.out[2*d], t.out[2*d+1] = src, dst
		// A message travelling towards -1 in dimension d has tag 2d, one
		// travelling towards +1 has 2d+1. The -1 slot receives what the
		// lower neighbour sent up, the +1 slot what the upper one sent down:
		// this pairs them even when both neighbours are the same rank
		// (a periodic dimension of size 1 or 2).
		t.outTag[2*d], t.outTag[2*d+1] = 2*d, 2*d+1
		t.inTag[2*d], t.inTag[2*d+1] = 2*d+1, 2*d
		// Upwards first, matching the receivers' slot order (-1 slot, which
		// takes the upward message, first).
		t.sendOrder = append(t.sendOrder, 2*d+1, 2*d)
	}
	t.setSpan(2 * n)
	return t
}

// cartCoords returns the coordinates of rank r in a grid of dims.
func cartCoords(dims []int, r int) []int {
	c := make([]int, len(dims))
	for i := len(dims) - 1; i >= 0; i-- {
		c[i] = r % dims[i]
		r /= dims[i]
	}
	return c
}

// rankAt returns the rank at coords (already in range).
func rankAt(dims, coords []int) int {
	r := 0
	for i, d := range dims {
		r = r*d + coords[i]
	}
	return r
}

// shift returns the ranks displaced by -disp and +disp from this rank
// along dimension dir, ProcNull beyond a non-periodic edge.
func (t *topology) shift(dir, disp int) (source, dest int) {
	at := func(delta int) int {
		c := append([]int(nil), t.coords...)
		x := c[dir] + delta
		n := t.dims[dir]
		if t.periods[dir] {
			x = ((x % n) + n) % n
		} else if x < 0 || x >= n {
			return ProcNull
		}
		c[dir] = x
		return rankAt(t.dims, c)
	}
	return at(-disp), at(disp)
}

// checkGrid validates the dims and periods of a Cartesian grid and returns
// the number of ranks it holds.
func (c *Comm) checkGrid(op string, dims []int, periods []bool) (int, error) {
	if err := c.intraOnly(op); err != nil { // topologies are for intracommunicators
		return 0, err
	}
	if len(periods) != len(dims) {
		return 0, c.argErr(op, ErrArg, "%d periods for %d dimensions", len(periods), len(dims))
	}
	n := 1
	for i, d := range dims {
		if d < 1 {
			return 0, c.argErr(op, ErrDims, "dims[%d] = %d: every dimension needs at least one rank", i, d)
		}
		n *= d
		if n > len(c.group) {
			return 0, c.argErr(op, ErrDims, "a %v grid needs more than the %d ranks of %s", dims, len(c.group), c.Name())
		}
	}
	return n, nil
}

// CartCreate returns a new communicator whose first d0·d1·…
// ranks form a Cartesian grid of dims, periodic (wrapping round) in
// dimension i when periods[i] is true (MPI_Cart_create). Ranks beyond the
// grid get a nil *Comm and a nil error (MPI_COMM_NULL): check
// `if grid == nil` before using it (its Rank is Undefined, its Size 0, and
// calls on it fail with ErrComm). With reorder true an implementation may renumber
// the ranks to fit the machine; mpigo keeps the ranks of c (rank r of the
// grid is rank r of c) whatever reorder says. The grid with no dimensions
// holds one rank (rank 0). It is collective over c and fails with
// ErrDims if the grid needs more ranks than c has.
func (c *Comm) CartCreate(dims []int, periods []bool, reorder bool) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CartCreate", c, Undefined, Undefined), &err)
	}
	const op = "CartCreate"
	n, err := c.checkGrid(op, dims, periods)
	if err != nil {
		return nil, err
	}
	d := append([]int(nil), dims...)
	p := append([]bool(nil), periods...)
	return c.topoComm(op, firstRanks(n), "cart", func(rank int) *topology { return cartTopo(d, p, rank) })
}

// CartMap returns the rank the caller would have in a grid of dims made
// by CartCreate with reorder, or Undefined if it would not belong to it
// (MPI_Cart_map). mpigo does not reorder, so this is the caller's rank in
// c when it is below the grid's size.
func (c *Comm) CartMap(dims []int, periods []bool) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CartMap", c, Undefined, Undefined), &err)
	}
	n, err := c.checkGrid("CartMap", dims, periods)
	if err != nil {
		return Undefined, err
	}
	if c.rank < n {
		return c.rank, nil
	}
	return Undefined, nil
}

// CartDim returns the number of dimensions of c's Cartesian grid
// (MPI_Cartdim_get).
func (c *Comm) CartDim() (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CartDim", c, Undefined, Undefined), &err)
	}
	t, err := c.topoOf("CartDim", Cart)
	if err != nil {
		return 0, err
	}
	return len(t.dims), nil
}

// CartGet returns the dimensions and periodicity of c's Cartesian grid
// and the caller's coordinates in it (MPI_Cart_get). The slices are the
// caller's to keep.
func (c *Comm) CartGet() (dims []int, periods []bool, coords []int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CartGet", c, Undefined, Undefined), &err)
	}
	t, err := c.topoOf("CartGet", Cart)
	if err != nil {
		return nil, nil, nil, err
	}
	return append([]int(nil), t.dims...), append([]bool(nil), t.periods...), append([]int(nil), t.coords...), nil
}

// CartCoords returns the coordinates of rank in c's Cartesian grid
// (MPI_Cart_coords).
func (c *Comm) CartCoords(rank int) (_ []int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CartCoords", c, Undefined, Undefined), &err)
	}
	const op = "CartCoords"
	t, err := c.topoOf(op, Cart)
	if err != nil {
		return nil, err
	}
	if rank < 0 || rank >= len(c.group) {
		return nil, c.argErr(op, ErrRank, "rank %d does not exist (size %d)", rank, len(c.group))
	}
	return cartCoords(t.dims, rank), nil
}

// CartRank returns the rank at coords in c's Cartesian grid
// (MPI_Cart_rank). A coordinate outside its dimension wraps round in a
// periodic dimension and fails with ErrArg in a non-periodic one.
func (c *Comm) CartRank(coords []int) (_ int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CartRank", c, Undefined, Undefined), &err)
	}
	const op = "CartRank"
	t, err := c.topoOf(op, Cart)
	if err != nil {
		return 0, err
	}
	if len(coords) != len(t.dims) {
		return 0, c.argErr(op, ErrArg, "%d coordinates for %d dimensions", len(coords), len(t.dims))
	}
	cc := make([]int, len(coords))
	for i, x := range coords {
		n := t.dims[i]
		if t.periods[i] {
			x = ((x % n) + n) % n
		} else if x < 0 || x >= n {
			return 0, c.argErr(op, ErrArg, "coordinate %d of dimension %d is outside 0..%d and the dimension is not periodic", x, i, n-1)
		}
		cc[i] = x
	}
	return rankAt(t.dims, cc), nil
}

// CartShift returns the ranks disp steps below (source) and above (dest)
// the caller along dimension dir of c's Cartesian grid (MPI_Cart_shift):
// the ranks to receive from and send to when data moves by disp. Beyond
// the edge of a non-periodic dimension the rank is ProcNull, so that
// Sendrecv(…, dest, …, source, …) needs no special case at the edges.
func (c *Comm) CartShift(dir, disp int) (source, dest int, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CartShift", c, Undefined, Undefined), &err)
	}
	const op = "CartShift"
	t, err := c.topoOf(op, Cart)
	if err != nil {
		return ProcNull, ProcNull, err
	}
	if dir < 0 || dir >= len(t.dims) {
		return ProcNull, ProcNull, c.argErr(op, ErrArg, "direction %d is not a dimension (the grid has %d)", dir, len(t.dims))
	}
	source, dest = t.shift(dir, disp)
	return source, dest, nil
}

// CartSub splits c's Cartesian grid into subgrids that keep the
// dimensions i with remain[i] true (MPI_Cart_sub): the ranks that share
// their coordinates in the dropped dimensions form one communicator, a
// Cartesian grid of the kept dimensions, ranked in the grid's order. With
// no dimension kept every rank gets a grid of its own with no
// dimensions. It is collective over c.
func (c *Comm) CartSub(remain []bool) (_ *Comm, err error) {
	if h := profiler.Load(); h != nil {
		defer h.exit(h.enter("Comm.CartSub", c, Undefined, Undefined), &err)
	}
	const op = "CartSub"
	t, err := c.topoOf(op, Cart)
	if err != nil {
		return nil, err
	}
	if len(remain) != len(t.dims) {
		return nil, c.argErr(op, ErrArg, "%d flags for %d dimensions", len(remain), len(t.dims))
	}
	var dims []int
	var periods []bool
	for i, keep := range remain {
		if keep {
			dims = append(dims, t.dims[i])
			periods = append(periods, t.periods[i])
		}
	}
	// The members of the caller's subgrid, in rank order (which is the
	// row-major order of the kept coordinates).
	var members []int
	for r := range len(c.group) {
		rc := cartCoords(t.dims, r)
		same := true
		for i, keep := range remain {
			if !keep && rc[i] != t.coords[i] {
				same = false
				break
			}
		}
		if same {
			members = append(members, r)
		}
	}
	return c.topoComm(op, members, "sub", func(rank int) *topology { return cartTopo(dims, periods, rank) })
}
