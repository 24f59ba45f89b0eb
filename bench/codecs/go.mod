module github.com/mpigo/mpi/bench/codecs

go 1.26.0

require (
	github.com/fxamacker/cbor/v2 v2.9.0
	github.com/mpigo/mpi v0.0.0
	github.com/vmihailenco/msgpack/v5 v5.4.1
)

require (
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/x448/float16 v0.8.4 // indirect
)

replace github.com/mpigo/mpi => ../..
