package mpi_test

import (
	"bufio"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// mpi31 lists the functions of MPI-3.1 chapters 3 to 8, and of the info
// objects (chapter 9) that environment management relies on, from the
// standard's function index. Every one must have a row in a checklist
// table of docs/mapping.md, and so must those of one-sided communication
// (chapter 11). (The I/O and tools chapters are not listed; generalized
// requests are added with their branch.)
var mpi31 = map[string][]string{
	"3 point-to-point": {
		"Send", "Recv", "Get_count", "Bsend", "Ssend", "Rsend", "Buffer_attach", "Buffer_detach",
		"Isend", "Ibsend", "Issend", "Irsend", "Irecv", "Wait", "Test", "Request_free",
		"Waitany", "Testany", "Waitall", "Testall", "Waitsome", "Testsome", "Request_get_status",
		"Iprobe", "Probe", "Improbe", "Mprobe", "Mrecv", "Imrecv", "Cancel", "Test_cancelled",
		"Send_init", "Bsend_init", "Ssend_init", "Rsend_init", "Recv_init", "Start", "Startall",
		"Sendrecv", "Sendrecv_replace",
	},
	"4 datatypes": {
		"Type_contiguous", "Type_vector", "Type_create_hvector", "Type_indexed", "Type_create_hindexed",
		"Type_create_indexed_block", "Type_create_hindexed_block", "Type_create_struct",
		"Type_create_subarray", "Type_create_darray", "Get_address", "Aint_add", "Aint_diff",
		"Type_size", "Type_size_x", "Type_get_extent", "Type_get_extent_x", "Type_create_resized",
		"Type_get_true_extent", "Type_get_true_extent_x", "Type_commit", "Type_free", "Type_dup",
		"Get_elements", "Get_elements_x", "Type_get_envelope", "Type_get_contents",
		"Pack", "Unpack", "Pack_size", "Pack_external", "Unpack_external", "Pack_external_size",
	},
	"5 collectives": {
		"Barrier", "Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather", "Allgatherv",
		"Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Op_create", "Op_free", "Allreduce",
		"Op_commutative", "Reduce_local", "Reduce_scatter_block", "Reduce_scatter", "Scan", "Exscan",
		"Ibarrier", "Ibcast", "Igather", "Igatherv", "Iscatter", "Iscatterv", "Iallgather",
		"Iallgatherv", "Ialltoall", "Ialltoallv", "Ialltoallw", "Ireduce", "Iallreduce",
		"Ireduce_scatter_block", "Ireduce_scatter", "Iscan", "Iexscan",
	},
	"6 groups, communicators, caching": {
		"Group_size", "Group_rank", "Group_translate_ranks", "Group_compare", "Comm_group",
		"Group_union", "Group_intersection", "Group_difference", "Group_incl", "Group_excl",
		"Group_range_incl", "Group_range_excl", "Group_free", "Comm_size", "Comm_rank",
		"Comm_compare", "Comm_dup", "Comm_dup_with_info", "Comm_idup", "Comm_create",
		"Comm_create_group", "Comm_split", "Comm_split_type", "Comm_free", "Comm_set_info",
		"Comm_get_info", "Comm_test_inter", "Comm_remote_size", "Comm_remote_group",
		"Intercomm_create", "Intercomm_merge", "Comm_create_keyval", "Comm_free_keyval",
		"Comm_set_attr", "Comm_get_attr", "Comm_delete_attr", "Win_create_keyval",
		"Win_free_keyval", "Win_set_attr", "Win_get_attr", "Win_delete_attr",
		"Type_create_keyval", "Type_free_keyval", "Type_set_attr", "Type_get_attr",
		"Type_delete_attr", "Comm_set_name", "Comm_get_name", "Type_set_name", "Type_get_name",
		"Win_set_name", "Win_get_name",
	},
	"7 topologies": {
		"Cart_create", "Dims_create", "Graph_create", "Dist_graph_create_adjacent",
		"Dist_graph_create", "Topo_test", "Graphdims_get", "Graph_get", "Cartdim_get", "Cart_get",
		"Cart_rank", "Cart_coords", "Graph_neighbors_count", "Graph_neighbors",
		"Dist_graph_neighbors_count", "Dist_graph_neighbors", "Cart_shift", "Cart_sub", "Cart_map",
		"Graph_map", "Neighbor_allgather", "Neighbor_allgatherv", "Neighbor_alltoall",
		"Neighbor_alltoallv", "Neighbor_alltoallw", "Ineighbor_allgather", "Ineighbor_allgatherv",
		"Ineighbor_alltoall", "Ineighbor_alltoallv", "Ineighbor_alltoallw",
	},
	"8 environment": {
		"Get_version", "Get_library_version", "Get_processor_name", "Alloc_mem", "Free_mem",
		"Comm_create_errhandler", "Comm_set_errhandler", "Comm_get_errhandler",
		"Win_create_errhandler", "Win_set_errhandler", "Win_get_errhandler",
		"File_create_errhandler", "File_set_errhandler", "File_get_errhandler", "Errhandler_free",
		"Error_string", "Error_class", "Add_error_class", "Add_error_code", "Add_error_string",
		"Comm_call_errhandler", "Win_call_errhandler", "File_call_errhandler", "Wtime", "Wtick",
		"Init", "Finalize", "Initialized", "Abort", "Finalized",
	},
	"9 info": {
		"Info_create", "Info_set", "Info_delete", "Info_get", "Info_get_valuelen", "Info_get_nkeys",
		"Info_get_nthkey", "Info_dup", "Info_free",
	},
	"12 threads": {"Init_thread", "Query_thread", "Is_thread_main"},
	"11 one-sided": {
		"Win_create", "Win_allocate", "Win_allocate_shared", "Win_shared_query", "Win_create_dynamic",
		"Win_attach", "Win_detach", "Win_free", "Win_get_group", "Win_set_info", "Win_get_info",
		"Put", "Get", "Accumulate", "Get_accumulate", "Fetch_and_op", "Compare_and_swap",
		"Rput", "Rget", "Raccumulate", "Rget_accumulate", "Win_fence", "Win_start", "Win_complete",
		"Win_post", "Win_wait", "Win_test", "Win_lock", "Win_unlock", "Win_lock_all",
		"Win_unlock_all", "Win_flush", "Win_flush_all", "Win_flush_local", "Win_flush_local_all",
		"Win_sync",
	},
	// MPI-4.0 and 4.1: the calls mpigo has; the rest is on the
	// not-implemented list.
	"4.0 persistent collectives": {
		"Barrier_init", "Bcast_init", "Gather_init", "Gatherv_init", "Scatter_init", "Scatterv_init",
		"Allgather_init", "Allgatherv_init", "Alltoall_init", "Alltoallv_init", "Alltoallw_init",
		"Reduce_init", "Allreduce_init", "Reduce_scatter_init", "Reduce_scatter_block_init",
		"Scan_init", "Exscan_init", "Neighbor_allgather_init", "Neighbor_allgatherv_init",
		"Neighbor_alltoall_init", "Neighbor_alltoallv_init", "Neighbor_alltoallw_init",
	},
	"4.0 partitioned":    {"Psend_init", "Precv_init", "Pready", "Pready_range", "Pready_list", "Parrived"},
	"4.0 point-to-point": {"Isendrecv", "Isendrecv_replace"},
}

// exportedNames returns the package's exported identifiers, read from its
// non-test source files: "mpi.Name" for package-level functions, types,
// variables and constants, "Type.Name" for methods, struct fields and
// interface methods.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	bp, err := build.ImportDir(".", 0) // the files this platform builds
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv == nil {
					names["mpi."+d.Name.Name] = true
				} else if r := recvName(d.Recv.List[0].Type); r != "" {
					names[r+"."+d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names["mpi."+n.Name] = true
							}
						}
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						names["mpi."+s.Name.Name] = true
						var fields *ast.FieldList
						switch tt := s.Type.(type) {
						case *ast.StructType:
							fields = tt.Fields
						case *ast.InterfaceType:
							fields = tt.Methods
						}
						if fields == nil {
							continue
						}
						for _, fl := range fields.List {
							for _, n := range fl.Names {
								if n.IsExported() {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					}
				}
			}
		}
	}
	return names
}

// recvName returns the type name of a method receiver: T for T, *T, T[E], *T[E].
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

type mappingRow struct {
	line     int
	mpi, go_ string
}

// checklistRows returns the rows of every table of docs/mapping.md whose
// header's first cell is "MPI function".
func checklistRows(t *testing.T) []mappingRow {
	t.Helper()
	f, err := os.Open("docs/mapping.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []mappingRow
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			in = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case cells[0] == "MPI function":
			in = true
		case !in || strings.HasPrefix(cells[0], "---"):
		case len(cells) != 2:
			t.Errorf("docs/mapping.md:%d: a checklist row has two cells: %s", n, line)
		default:
			rows = append(rows, mappingRow{n, cells[0], cells[1]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

var (
	mpiFuncRE = regexp.MustCompile(`^MPI_[A-Z][A-Za-z0-9_]*$`)
	codeRE    = regexp.MustCompile("`([^`]*)`")
	goNameRE  = regexp.MustCompile(`^(mpi|[A-Z][A-Za-z0-9]*)\.([A-Z][A-Za-z0-9_]*)$`)
)

// TestMappingChecklist checks the checklist of docs/mapping.md: every
// function of the standard's chapters 3-8 has a row; every row names Go
// identifiers that exist, or says why there is none (n/a:) or that
// another branch adds it (pending:).
func TestMappingChecklist(t *testing.T) {
	names := exportedNames(t)
	rows := checklistRows(t)
	if len(rows) < 200 {
		t.Fatalf("only %d checklist rows in docs/mapping.md", len(rows))
	}
	seen := map[string]int{}
	var pending []string
	for _, r := range rows {
		at := "docs/mapping.md:" + strconv.Itoa(r.line) + ": " + r.mpi
		if !mpiFuncRE.MatchString(r.mpi) {
			t.Errorf("%s: the first cell must be one MPI function name", at)
			continue
		}
		if prev, dup := seen[r.mpi]; dup {
			t.Errorf("%s: listed twice (also on line %d)", at, prev)
		}
		seen[r.mpi] = r.line
		switch {
		case strings.HasPrefix(r.go_, "n/a:"):
			if len(strings.TrimSpace(strings.TrimPrefix(r.go_, "n/a:"))) < 10 {
				t.Errorf("%s: not applicable, but no reason given", at)
			}
			continue
		case strings.HasPrefix(r.go_, "pending:"):
			pending = append(pending, r.mpi)
			continue
		}
		spans := codeRE.FindAllStringSubmatch(r.go_, -1)
		if len(spans) == 0 {
			t.Errorf("%s: no Go name (write `mpi.Name` or `Type.Method`, or n/a: with a reason)", at)
		}
		for _, s := range spans {
			if !goNameRE.MatchString(s[1]) {
				t.Errorf("%s: %q is not a Go name of the form mpi.Name or Type.Name", at, s[1])
			} else if !names[s[1]] {
				t.Errorf("%s: %s does not exist in package mpi", at, s[1])
			}
		}
	}
	var missing []string
	for ch, fns := range mpi31 {
		for _, fn := range fns {
			if _, ok := seen["MPI_"+fn]; !ok {
				missing = append(missing, "MPI_"+fn+" (chapter "+ch+")")
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("docs/mapping.md has no checklist row for %s", m)
	}
	if len(pending) > 0 {
		t.Logf("pending (added by other branches): %s", strings.Join(pending, ", "))
	}
}

// TestMappingChecklistCatches makes sure the checker itself notices a
// name that does not exist.
func TestMappingChecklistCatches(t *testing.T) {
	names := exportedNames(t)
	for _, want := range []string{"mpi.Send", "Comm.Send", "Status.GetElements", "Status.Source", "Datatype.Envelope", "mpi.ErrTruncate", "mpi.Float64Loc", "Pending.Wait", "mpi.ThreadMultiple"} {
		if !names[want] {
			t.Errorf("%s not found among the package's names", want)
		}
	}
	for _, absent := range []string{"mpi.send", "Comm.NoSuchMethod", "mpi.Comm.Send", "Datatype.size"} {
		if names[absent] {
			t.Errorf("%s found among the package's names", absent)
		}
	}
}

// notImplemented returns the items of the "Not implemented yet" list in
// the document at path: each line after the marker comment up to the next
// heading.
func notImplemented(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- kept true by TestNotImplementedList")
	if !ok {
		t.Fatalf("%s has no not-implemented list", path)
	}
	var items []string
	for _, line := range strings.Split(rest, "\n")[1:] {
		if strings.HasPrefix(line, "#") {
			break
		}
		if strings.HasPrefix(line, "- ") {
			items = append(items, line)
		}
	}
	return items
}

var probeRE = regexp.MustCompile("\\(probe: `([^`]+)`\\)")

// TestNotImplementedList keeps the "Not implemented yet" lists of the
// README and docs/mapping.md true: both hold the same items, and each
// item's probe (the name or file that will exist when the feature lands)
// must not exist yet. A change that adds mpi.OpenFile, say, fails here
// until it takes MPI-IO off the lists.
func TestNotImplementedList(t *testing.T) {
	readme := notImplemented(t, "README.md")
	mapping := notImplemented(t, "docs/mapping.md")
	if strings.Join(readme, "\n") != strings.Join(mapping, "\n") {
		t.Errorf("the not-implemented lists of README.md and docs/mapping.md differ:\n%s\n---\n%s", strings.Join(readme, "\n"), strings.Join(mapping, "\n"))
	}
	// The list shrinks as features land; its last item, Fortran (not
	// planned), stays, so finding it shows the list was read at all.
	if len(readme) == 0 || !strings.Contains(readme[len(readme)-1], "Fortran") {
		t.Fatalf("README.md's not-implemented list was not read whole (%d items, the last should be Fortran's): %q", len(readme), readme)
	}
	names := exportedNames(t)
	for _, item := range readme {
		m := probeRE.FindStringSubmatch(item)
		if m == nil {
			if !strings.Contains(item, "not planned") {
				t.Errorf("README.md: %q names no probe (write (probe: `mpi.Name`), `Type.Method` or a path), nor says it is not planned", item)
			}
			continue
		}
		probe := m[1]
		if goNameRE.MatchString(probe) {
			if names[probe] {
				t.Errorf("%s exists now: take %q off the not-implemented lists (README.md, docs/mapping.md) and add its rows to docs/mapping.md", probe, item)
			}
			continue
		}
		if _, err := os.Stat(probe); err == nil {
			t.Errorf("%s exists now: take %q off the not-implemented lists (README.md, docs/mapping.md)", probe, item)
		}
	}
	// The checker must see names that exist.
	if !names["Comm.Send"] || !names["mpi.NewWindow"] {
		t.Fatal("exportedNames misses names that exist")
	}
}
