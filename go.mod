module github.com/mpigo/mpi

go 1.24
