package main

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
)

// Mixed-architecture jobs (docs/hetero.md): the groups of an MPMD job may
// start programs built for different machines, some run through an
// emulator (qemu-s390x-static ./prog.s390x). Processes of different
// architectures on one node cannot share memory, so when the programs'
// architectures differ and no transport was chosen, the launcher chooses
// tcp for the job.

// elfMachines names the architectures the launcher recognises in an ELF
// header, as GOARCH spells them.
var elfMachines = map[elf.Machine]string{
	elf.EM_X86_64: "amd64", elf.EM_386: "386", elf.EM_AARCH64: "arm64", elf.EM_ARM: "arm",
	elf.EM_S390: "s390x", elf.EM_PPC64: "ppc64", elf.EM_RISCV: "riscv64", elf.EM_MIPS: "mips",
	elf.EM_LOONGARCH: "loong64",
}

// programArch returns the architecture a group's processes run as: the
// one an emulator named qemu-ARCH[-static] emulates, or the one in the
// program's ELF header; "" if it cannot tell (a script, a missing file,
// another executable format).
func programArch(g runGroup) string {
	base := filepath.Base(g.prog)
	if arch, ok := strings.CutPrefix(base, "qemu-"); ok {
		arch = strings.TrimSuffix(arch, "-static")
		switch arch {
		case "x86_64":
			return "amd64"
		case "i386":
			return "386"
		case "aarch64":
			return "arm64"
		}
		return arch
	}
	f, err := elf.Open(g.prog)
	if err != nil {
		return ""
	}
	defer f.Close()
	arch := elfMachines[f.Machine]
	if arch == "ppc64" && f.ByteOrder.String() == "LittleEndian" {
		arch = "ppc64le"
	}
	if arch == "mips" && f.Class == elf.ELFCLASS64 {
		arch = "mips64"
	}
	return arch
}

// settleArch chooses tcp for a job whose groups run on different
// architectures, unless a transport was asked for (-transport or
// MPIGO_TRANSPORT).
func (cfg *runConfig) settleArch() {
	if cfg.transport != "" || os.Getenv("MPIGO_TRANSPORT") != "" || len(cfg.groups) < 2 {
		return
	}
	var archs []string
	for _, g := range cfg.groups {
		a := programArch(g)
		if a == "" {
			continue
		}
		seen := false
		for _, b := range archs {
			seen = seen || a == b
		}
		if !seen {
			archs = append(archs, a)
		}
	}
	if len(archs) > 1 {
		cfg.transport = "tcp"
	}
}
