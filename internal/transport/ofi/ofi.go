//go:build cgo && mpigo_ofi

package ofi

/*
#cgo LDFLAGS: -lfabric
#define _GNU_SOURCE
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_tagged.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// A buffer of an operation: the context libfabric keeps for it comes
// first, so that a completion's op_context is the buffer itself.
typedef struct {
	struct fi_context2 ctx;
	struct fid_mr *lmr; // its registration for local access (FI_MR_LOCAL), or NULL
	struct fid_mr *slab; // the registration of the slab it belongs to, or NULL
	size_t cap;
	char data[];
} mg_buf;

enum { MG_ENTS = 16, MG_INJECT_WANT = 4096, MG_CTL = 16 };

typedef struct {
	struct fi_info *info;
	struct fid_fabric *fab;
	struct fid_domain *dom;
	struct fid_av *av;
	struct fid_cq *cq;
	struct fid_ep *ep;
	int rma, virt, mrep, provkey;
	int writes; // remote writes too (a window's puts)
	int atomics; // atomic operations on 4- and 8-byte integers (a window's accumulates; mg_atomics_valid)
	int raw;    // a read is ordered after the writes before it to its target (FI_ORDER_RAW)
	int manual; // the provider moves data only while its endpoint is progressed (FI_PROGRESS_MANUAL)
	int local; // register buffers for local access (FI_MR_LOCAL)
	int nreg;  // registrations for local access made (tests)
	int fd;
	int wake[2];
	uint64_t nextkey;
	char name[1024];
	size_t namelen;
	size_t inject;        // the largest message fi_tinject takes
	char *scratch;        // a message to inject (inject bytes)
	char ctl[MG_CTL];     // a control message to inject
	char *slab;           // the send slab: nslab buffers of stride bytes
	size_t nslab, stride;
	struct fid_mr *slabmr; // its registration (FI_MR_LOCAL), or NULL
	struct fi_cq_tagged_entry ents[MG_ENTS]; // what mg_cq read
} mg_ofi;

static struct fi_info *mg_hints(int rma, size_t inject) {
	struct fi_info *h = fi_allocinfo();
	if (!h) return NULL;
	// rma: 0 none, 1 remote reads (the single copy of large messages),
	// 2 reads and writes (a window's gets and puts too), 3 atomics as
	// well (a window's accumulates).
	h->caps = FI_TAGGED | (rma ? (FI_RMA | FI_READ | FI_REMOTE_READ) : 0) | (rma > 1 ? (FI_WRITE | FI_REMOTE_WRITE) : 0) | (rma > 2 ? FI_ATOMIC : 0);
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->msg_order = FI_ORDER_SAS;
	h->tx_attr->inject_size = inject;
	return h;
}

// mg_getinfo asks libfabric for the providers that can serve us, with
// remote reads if rma (and writes if rma is 2); FI_PROVIDER narrows the list as libfabric does, and
// prov, unless NULL or empty, names the provider.
static int mg_getinfo(int rma, const char *prov, struct fi_info **out) {
	struct fi_info *h = mg_hints(rma, 0);
	if (!h) return -FI_ENOMEM;
	if (prov && *prov && !(h->fabric_attr->prov_name = strdup(prov))) { fi_freeinfo(h); return -FI_ENOMEM; }
	int st = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, h, out);
	fi_freeinfo(h);
	return st;
}

// mg_again asks the provider, fabric and domain of i again, with the
// hints of rma and inject; it returns what libfabric offers, or NULL.
static struct fi_info *mg_again(int rma, size_t inject, struct fi_info *i) {
	struct fi_info *h = mg_hints(rma, inject), *l = NULL;
	if (!h) return NULL;
	h->fabric_attr->prov_name = strdup(i->fabric_attr->prov_name);
	if (i->fabric_attr->name) h->fabric_attr->name = strdup(i->fabric_attr->name);
	if (i->domain_attr->name) h->domain_attr->name = strdup(i->domain_attr->name);
	int st = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, h, &l);
	fi_freeinfo(h);
	if (st != 0 || !l) return NULL;
	if (strcmp(l->fabric_attr->prov_name, i->fabric_attr->prov_name) != 0) {
		fi_freeinfo(l);
		return NULL;
	}
	return l;
}

// mg_ordered says whether the provider of info, which has remote writes,
// orders a read after the writes before it to the same target
// (FI_ORDER_RAW), which a window's flush needs to be a read. Only an
// order it gives unasked is taken (rxm's): shm gives it when asked, but
// its reads then wait for the target's progress instead of copying
// through cross-memory attach (measured, docs/fabric.md), and asking
// could turn libfabric's choice to another provider.
static int mg_ordered(int rma, struct fi_info *info) {
	return rma > 1 && (info->tx_attr->msg_order & FI_ORDER_RAW) != 0;
}

// mg_inject_more asks the provider of *info for a larger inject size
// (MG_INJECT_WANT): a frame that fits goes out with fi_tinject, copied
// by the provider, without a completion or a registered buffer. Providers
// whose default is smaller (rxm's is 64 bytes) often take more when asked;
// one that refuses keeps *info as it is.
static void mg_inject_more(int rma, struct fi_info **info) {
	struct fi_info *i = *info;
	if (i->tx_attr->inject_size >= MG_INJECT_WANT) return;
	struct fi_info *l = mg_again(rma, MG_INJECT_WANT, i);
	if (!l) return;
	if (l->tx_attr->inject_size > i->tx_attr->inject_size) {
		fi_freeinfo(i);
		*info = l;
		return;
	}
	fi_freeinfo(l);
}

// mg_atomic_caps asks the provider of *info, which has remote reads and
// writes, again with atomics as well (FI_ATOMIC), keeping its fabric,
// domain and inject size; it reports whether the provider took them.
// Only the provider libfabric chose is asked: asking for atomics from
// the start could turn its choice to another.
static int mg_atomic_caps(struct fi_info **info) {
	struct fi_info *i = *info;
	struct fi_info *l = mg_again(3, i->tx_attr->inject_size, i);
	if (!l) return 0;
	if ((l->caps & FI_ATOMIC) == 0 || l->tx_attr->inject_size < i->tx_attr->inject_size) {
		fi_freeinfo(l);
		return 0;
	}
	fi_freeinfo(i);
	*info = l;
	return 1;
}

// mg_atomics_valid reports whether the endpoint applies every operation
// a window's accumulates take to unsigned integers of 4 and 8 bytes,
// with the value before: add, and, or, exclusive or, swap and
// compare-and-swap.
static int mg_atomics_valid(mg_ofi *u) {
	enum fi_datatype dts[2] = {FI_UINT32, FI_UINT64};
	enum fi_op ops[5] = {FI_SUM, FI_BAND, FI_BOR, FI_BXOR, FI_ATOMIC_WRITE};
	size_t count;
	for (int d = 0; d < 2; d++) {
		for (int o = 0; o < 5; o++) {
			count = 0;
			if (fi_fetch_atomicvalid(u->ep, dts[d], ops[o], &count) != 0 || count < 1) return 0;
		}
		count = 0;
		if (fi_compare_atomicvalid(u->ep, dts[d], FI_CSWAP, &count) != 0 || count < 1) return 0;
	}
	return 1;
}

static void mg_free(mg_ofi *u) {
	if (u->ep) fi_close(&u->ep->fid);
	if (u->slabmr) fi_close(&u->slabmr->fid);
	free(u->slab);
	free(u->scratch);
	if (u->av) fi_close(&u->av->fid);
	if (u->cq) fi_close(&u->cq->fid);
	if (u->dom) fi_close(&u->dom->fid);
	if (u->fab) fi_close(&u->fab->fid);
	if (u->info) fi_freeinfo(u->info);
	if (u->wake[0] >= 0) close(u->wake[0]);
	if (u->wake[1] >= 0) close(u->wake[1]);
	free(u);
}

// mg_init opens the endpoint of a rank. It returns 0 or a negative fi
// error; *what names the step that failed.
static int mg_init(mg_ofi **out, int norma, int local, int atomics, const char *prov, const char *shmname, const char **what) {
	mg_ofi *u = calloc(1, sizeof *u);
	if (!u) { *what = "calloc"; return -FI_ENOMEM; }
	u->wake[0] = u->wake[1] = -1;
	u->fd = -1;
	u->nextkey = 1;
	if (pipe2(u->wake, O_NONBLOCK | O_CLOEXEC) != 0) { *what = "pipe2"; mg_free(u); return -FI_EIO; }
	int st = -FI_ENODATA;
	for (int rma = 2; rma > 0 && !norma && st != 0; rma--) {
		if ((st = mg_getinfo(rma, prov, &u->info)) == 0) u->rma = rma;
	}
	if (st != 0) st = mg_getinfo(0, prov, &u->info);
	if (st != 0) { u->info = NULL; *what = "fi_getinfo (FI_EP_RDM, FI_TAGGED)"; mg_free(u); return st; }
	mg_inject_more(u->rma, &u->info);
	if (atomics && u->rma > 1 && mg_atomic_caps(&u->info)) u->rma = 3;
	struct fi_info *i = u->info;
	u->writes = u->rma > 1;
	u->raw = mg_ordered(u->rma, i);
	u->manual = i->domain_attr->data_progress != FI_PROGRESS_AUTO;
	u->inject = i->tx_attr->inject_size;
	if (u->inject && !(u->scratch = malloc(u->inject))) { *what = "malloc"; mg_free(u); return -FI_ENOMEM; }
	u->virt = (i->domain_attr->mr_mode & FI_MR_VIRT_ADDR) != 0;
	u->mrep = (i->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0;
	u->provkey = (i->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0;
	u->local = local || (i->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
	if ((st = fi_fabric(i->fabric_attr, &u->fab, NULL)) != 0) { u->fab = NULL; *what = "fi_fabric"; mg_free(u); return st; }
	if ((st = fi_domain(u->fab, i, &u->dom, NULL)) != 0) { u->dom = NULL; *what = "fi_domain"; mg_free(u); return st; }
	struct fi_cq_attr ca;
	memset(&ca, 0, sizeof ca);
	ca.format = FI_CQ_FORMAT_TAGGED;
	ca.wait_obj = FI_WAIT_FD;
	if (fi_cq_open(u->dom, &ca, &u->cq, NULL) != 0) {
		ca.wait_obj = FI_WAIT_NONE;
		if ((st = fi_cq_open(u->dom, &ca, &u->cq, NULL)) != 0) { u->cq = NULL; *what = "fi_cq_open"; mg_free(u); return st; }
	} else if (fi_control(&u->cq->fid, FI_GETWAIT, &u->fd) != 0) {
		u->fd = -1;
	}
	struct fi_av_attr aa;
	memset(&aa, 0, sizeof aa);
	aa.type = i->domain_attr->av_type != FI_AV_UNSPEC ? i->domain_attr->av_type : FI_AV_MAP;
	if ((st = fi_av_open(u->dom, &aa, &u->av, NULL)) != 0) { u->av = NULL; *what = "fi_av_open"; mg_free(u); return st; }
	if ((st = fi_endpoint(u->dom, i, &u->ep, NULL)) != 0) { u->ep = NULL; *what = "fi_endpoint"; mg_free(u); return st; }
	if ((st = fi_ep_bind(u->ep, &u->av->fid, 0)) != 0) { *what = "fi_ep_bind (address vector)"; mg_free(u); return st; }
	if ((st = fi_ep_bind(u->ep, &u->cq->fid, FI_TRANSMIT | FI_RECV)) != 0) { *what = "fi_ep_bind (completion queue)"; mg_free(u); return st; }
	if (shmname && i->fabric_attr->prov_name && strcmp(i->fabric_attr->prov_name, "shm") == 0 &&
	    (st = fi_setname(&u->ep->fid, (void *)shmname, strlen(shmname) + 1)) != 0) {
		*what = "fi_setname"; mg_free(u); return st;
	}
	if ((st = fi_enable(u->ep)) != 0) { *what = "fi_enable"; mg_free(u); return st; }
	u->namelen = sizeof u->name;
	if ((st = fi_getname(&u->ep->fid, u->name, &u->namelen)) != 0) { *what = "fi_getname"; mg_free(u); return st; }
	u->atomics = u->rma > 2 && mg_atomics_valid(u);
	*out = u;
	return 0;
}

static const char *mg_prov(mg_ofi *u) { return u->info->fabric_attr->prov_name; }
static const char *mg_dom(mg_ofi *u) { return u->info->domain_attr->name; }

static int mg_insert(mg_ofi *u, const void *name, fi_addr_t *addr) {
	int n = fi_av_insert(u->av, name, 1, addr, 0, NULL);
	if (n == 1) return 0;
	return n < 0 ? n : -FI_EADDRNOTAVAIL;
}

static mg_buf *mg_alloc(size_t n) {
	mg_buf *b = malloc(sizeof(mg_buf) + n);
	if (b) b->cap = n, b->lmr = NULL, b->slab = NULL;
	return b;
}

// mg_slab_init makes the send slab: n buffers of size bytes in one
// allocation, registered once for local access where the provider wants
// it (FI_MR_LOCAL), so that a send from it never registers. It returns 0,
// or a negative fi error and leaves no slab.
static int mg_slab_init(mg_ofi *u, size_t n, size_t size) {
	u->stride = (sizeof(mg_buf) + size + 63) & ~(size_t)63;
	if (posix_memalign((void **)&u->slab, 4096, n * u->stride) != 0) { u->slab = NULL; return -FI_ENOMEM; }
	u->nslab = n;
	if (u->local) {
		u->nreg++;
		int st = fi_mr_reg(u->dom, u->slab, n * u->stride, FI_SEND, 0, u->provkey ? 0 : u->nextkey++, 0, &u->slabmr, NULL);
		if (st == 0 && u->mrep && ((st = fi_mr_bind(u->slabmr, &u->ep->fid, 0)) != 0 || (st = fi_mr_enable(u->slabmr)) != 0)) {
			fi_close(&u->slabmr->fid);
		}
		if (st != 0) {
			// No slab: sends copy into buffers of their own.
			u->slabmr = NULL;
			free(u->slab);
			u->slab = NULL;
			u->nslab = 0;
			return st;
		}
	}
	for (size_t k = 0; k < n; k++) {
		mg_buf *b = (mg_buf *)(u->slab + k * u->stride);
		b->cap = size, b->lmr = NULL, b->slab = u->slabmr;
	}
	return 0;
}

static mg_buf *mg_slab_buf(mg_ofi *u, size_t k) { return (mg_buf *)(u->slab + k * u->stride); }

// mg_release frees b and its registration; the endpoint must be done
// with it.
static void mg_release(mg_buf *b) {
	if (!b) return;
	if (b->lmr) fi_close(&b->lmr->fid);
	free(b);
}

// mg_desc returns in *desc the local descriptor of b's data where the
// provider wants local buffers registered (FI_MR_LOCAL), registering
// them on first use (a receive buffer is posted again and again, a send
// buffer once); NULL otherwise. It returns 0 or a negative fi error.
static int mg_desc(mg_ofi *u, mg_buf *b, void **desc) {
	*desc = NULL;
	if (!u->local) return 0;
	if (b->slab) { *desc = fi_mr_desc(b->slab); return 0; }
	if (!b->lmr) {
		u->nreg++;
		int st = fi_mr_reg(u->dom, b->data, b->cap ? b->cap : 1, FI_SEND | FI_RECV | FI_READ | FI_WRITE, 0,
			u->provkey ? 0 : u->nextkey++, 0, &b->lmr, NULL);
		if (st != 0) { b->lmr = NULL; return st; }
		if (u->mrep) {
			if ((st = fi_mr_bind(b->lmr, &u->ep->fid, 0)) != 0 || (st = fi_mr_enable(b->lmr)) != 0) {
				fi_close(&b->lmr->fid);
				b->lmr = NULL;
				return st;
			}
		}
	}
	*desc = fi_mr_desc(b->lmr);
	return 0;
}

static ssize_t mg_tsend(mg_ofi *u, mg_buf *b, size_t len, fi_addr_t to, uint64_t tag) {
	void *desc;
	int st = mg_desc(u, b, &desc);
	if (st != 0) return st;
	return fi_tsend(u->ep, b->data, len, desc, to, tag, b);
}

// mg_inject sends the len bytes of u->scratch (ctl: of u->ctl) to to;
// the provider has copied them when it returns 0.
//
// u comes as a number, as in mg_cq: a pointer argument costs cgo's
// pointer check at every call.
static ssize_t mg_inject(uintptr_t up, int ctl, size_t len, fi_addr_t to, uint64_t tag) {
	mg_ofi *u = (mg_ofi *)up;
	return fi_tinject(u->ep, ctl ? u->ctl : u->scratch, len, to, tag);
}

static ssize_t mg_trecv(mg_ofi *u, mg_buf *b) {
	void *desc;
	int st = mg_desc(u, b, &desc);
	if (st != 0) return st;
	return fi_trecv(u->ep, b->data, b->cap, desc, FI_ADDR_UNSPEC, 0, 0xffffffffULL, b);
}

// mg_read reads len bytes at raddr of from into dst's data at off; ctx
// is the operation's context.
static ssize_t mg_read(mg_ofi *u, mg_buf *dst, size_t off, size_t len, fi_addr_t from, uint64_t raddr, uint64_t key, mg_buf *ctx) {
	void *desc;
	int st = mg_desc(u, dst, &desc);
	if (st != 0) return st;
	return fi_read(u->ep, dst->data + off, len, desc, from, raddr, key, ctx);
}

// mg_mr registers len bytes at buf for access (FI_REMOTE_READ, FI_READ),
// with a key of the transport's own unless the provider chooses keys, and
// binds and enables the registration where the provider asks for that
// (FI_MR_ENDPOINT). It returns 0 or a negative fi error.
static int mg_mr(mg_ofi *u, uintptr_t buf, size_t len, uint64_t access, struct fid_mr **mr) {
	int st = fi_mr_reg(u->dom, (void *)buf, len, access, 0, u->provkey ? 0 : u->nextkey++, 0, mr, NULL);
	if (st != 0) return st;
	if (u->mrep) {
		if ((st = fi_mr_bind(*mr, &u->ep->fid, 0)) != 0 || (st = fi_mr_enable(*mr)) != 0) {
			fi_close(&(*mr)->fid);
			return st;
		}
	}
	return 0;
}

// mg_reg registers len bytes at buf for peers to read (and, if write,
// to write), and returns the address and key they reach it by.
static int mg_reg(mg_ofi *u, uintptr_t buf, size_t len, int write, struct fid_mr **mr, uint64_t *raddr, uint64_t *key) {
	int st = mg_mr(u, buf, len, FI_REMOTE_READ | (write ? FI_REMOTE_WRITE : 0), mr);
	if (st != 0) return st;
	*key = fi_mr_key(*mr);
	*raddr = u->virt ? (uint64_t)buf : 0;
	return 0;
}

static void mg_unreg(struct fid_mr *mr) { fi_close(&mr->fid); }

// mg_reg_local registers len bytes at buf for local access by reads
// into them (write 0), by writes from them (1), or both (2: an atomic
// operation's operands and results) (FI_MR_LOCAL providers). It returns
// 0 or a negative fi error.
static int mg_reg_local(mg_ofi *u, uintptr_t buf, size_t len, int write, struct fid_mr **mr) {
	u->nreg++;
	return mg_mr(u, buf, len, write == 2 ? (FI_READ | FI_WRITE) : write ? FI_WRITE : FI_READ, mr);
}

// mg_amo posts one atomic operation on the unsigned integer of size
// bytes (4 or 8) at raddr of to: op 0-4 (add, and, or, exclusive or,
// swap) with the operand at opnd, or 5, a compare-and-swap of the value
// at cmp for the one at opnd; the integer's value before goes to res.
// The three lie in memory of the caller's, registered as lmr where the
// provider wants local buffers registered (else lmr is NULL); ctx is the
// operation's context. Its completion comes once the value before is in
// res, so the operation is applied in the peer's memory.
static ssize_t mg_amo(mg_ofi *u, int op, int size, uintptr_t opnd, uintptr_t cmp, uintptr_t res, struct fid_mr *lmr, fi_addr_t to, uint64_t raddr, uint64_t key, mg_buf *ctx) {
	static const enum fi_op ops[5] = {FI_SUM, FI_BAND, FI_BOR, FI_BXOR, FI_ATOMIC_WRITE};
	enum fi_datatype dt = size == 4 ? FI_UINT32 : FI_UINT64;
	void *desc = lmr ? fi_mr_desc(lmr) : NULL;
	if (op == 5) {
		return fi_compare_atomic(u->ep, (void *)opnd, 1, desc, (void *)cmp, desc, (void *)res, desc, to, raddr, key, dt, FI_CSWAP, ctx);
	}
	if (op < 0 || op > 4) return -FI_EINVAL;
	return fi_fetch_atomic(u->ep, (void *)opnd, 1, desc, (void *)res, desc, to, raddr, key, dt, ops[op], ctx);
}

// mg_rread reads len bytes at raddr of from straight into dst, memory
// of the caller's (registered as lmr where the provider wants local
// buffers registered, else lmr is NULL); ctx is the operation's context.
static ssize_t mg_rread(mg_ofi *u, uintptr_t dst, size_t len, struct fid_mr *lmr, fi_addr_t from, uint64_t raddr, uint64_t key, mg_buf *ctx) {
	return fi_read(u->ep, (void *)dst, len, lmr ? fi_mr_desc(lmr) : NULL, from, raddr, key, ctx);
}

// mg_write writes len bytes at src (desc its local descriptor, or NULL)
// to raddr of to; its completion comes once src may be reused, or, if
// delivered, once they are in the peer's memory (FI_DELIVERY_COMPLETE).
// ctx is the operation's context.
static ssize_t mg_write(mg_ofi *u, void *src, size_t len, void *desc, fi_addr_t to, uint64_t raddr, uint64_t key, void *ctx, int delivered) {
	struct iovec iov = { src, len };
	struct fi_rma_iov rma = { raddr, len, key };
	struct fi_msg_rma m;
	memset(&m, 0, sizeof m);
	m.msg_iov = &iov;
	m.desc = &desc;
	m.iov_count = 1;
	m.addr = to;
	m.rma_iov = &rma;
	m.rma_iov_count = 1;
	m.context = ctx;
	return fi_writemsg(u->ep, &m, (delivered ? FI_DELIVERY_COMPLETE : 0) | FI_COMPLETION);
}

// mg_rwrite writes len bytes at src, memory of the caller's (registered
// as lmr where the provider wants local buffers registered, else lmr is
// NULL), as mg_write does.
static ssize_t mg_rwrite(mg_ofi *u, uintptr_t src, size_t len, struct fid_mr *lmr, fi_addr_t to, uint64_t raddr, uint64_t key, mg_buf *ctx, int delivered) {
	return mg_write(u, (void *)src, len, lmr ? fi_mr_desc(lmr) : NULL, to, raddr, key, ctx, delivered);
}

// mg_bwrite writes the first len bytes of b's data, as mg_write does; b
// is the operation's context.
static ssize_t mg_bwrite(mg_ofi *u, mg_buf *b, size_t len, fi_addr_t to, uint64_t raddr, uint64_t key, int delivered) {
	void *desc;
	int st = mg_desc(u, b, &desc);
	if (st != 0) return st;
	return mg_write(u, b->data, len, desc, to, raddr, key, b, delivered);
}

// mg_cq reads up to MG_ENTS completions into u->ents. It returns how
// many, 0 if none, or -FI_EAVAIL when an error completion is next.
static ssize_t mg_cq(uintptr_t up) {
	mg_ofi *u = (mg_ofi *)up;
	ssize_t n = fi_cq_read(u->cq, u->ents, MG_ENTS);
	if (n == -FI_EAGAIN) return 0;
	return n;
}

// mg_cqerr reads the next error completion: its context, and its error.
static int mg_cqerr(mg_ofi *u, void **ctx, int *prov, char *msg, size_t room) {
	struct fi_cq_err_entry e;
	memset(&e, 0, sizeof e);
	ssize_t n = fi_cq_readerr(u->cq, &e, 0);
	if (n != 1) return n < 0 ? (int)n : -FI_EAGAIN;
	*ctx = e.op_context;
	*prov = e.prov_errno;
	msg[0] = 0;
	const char *s = fi_cq_strerror(u->cq, e.prov_errno, e.err_data, NULL, 0);
	if (s) { strncpy(msg, s, room - 1); msg[room - 1] = 0; }
	return e.err;
}

static void mg_wake(mg_ofi *u) {
	char c = 1;
	if (write(u->wake[1], &c, 1) < 0) {}
}

// mg_sleep waits until the completion queue or the wake pipe has work,
// or ms milliseconds pass. Without a wait descriptor it naps.
static void mg_sleep(mg_ofi *u, int ms) {
	struct pollfd p[2] = {{u->wake[0], POLLIN, 0}, {u->fd, POLLIN, 0}};
	int n = 1;
	if (u->fd >= 0) {
		struct fid *f = &u->cq->fid;
		if (fi_trywait(u->fab, &f, 1) != 0) return;
		n = 2;
	} else if (ms > 1) {
		ms = 1;
	}
	poll(p, n, ms);
	char b[64];
	while (read(u->wake[0], b, sizeof b) > 0) {}
}

// mg_close closes the endpoint, so that the provider touches none of
// the buffers of its operations after; mg_done then frees the rest,
// once the buffers (and their registrations) are released.
static void mg_close(mg_ofi *u) {
	if (u->ep) fi_close(&u->ep->fid);
	u->ep = NULL;
	if (u->slabmr) fi_close(&u->slabmr->fid);
	u->slabmr = NULL;
}

static void mg_done(mg_ofi *u) { mg_free(u); }

// mg_describe lists the providers libfabric offers for our hints, in its
// order of preference (the first is the one a rank takes), in a malloc'd
// string; *atomics says whether the first has atomic operations too
// when asked (Config.Atomics).
static char *mg_describe(int *status, int *atomics) {
	struct fi_info *l = NULL;
	int rma = 1;
	int st = mg_getinfo(1, NULL, &l);
	if (st != 0) { rma = 0; st = mg_getinfo(0, NULL, &l); }
	if (st != 0) { *status = st; return NULL; }
	size_t room = 4096, len = 0;
	char *s = calloc(1, room);
	if (!s) { fi_freeinfo(l); *status = -FI_ENOMEM; return NULL; }
	for (struct fi_info *i = l; i && len < room - 200; i = i->next) {
		char item[200];
		snprintf(item, sizeof item, "%s%s/%s", len ? " " : "", i->fabric_attr->prov_name, i->domain_attr->name);
		if (strstr(s, item + (len ? 1 : 0))) continue;
		strcat(s, item);
		len = strlen(s);
	}
	if (!rma) strcat(s, " (no remote reads: large messages go in pieces)");
	struct fi_info *a = rma ? mg_again(3, 0, l) : NULL;
	*atomics = a && (a->caps & FI_ATOMIC) != 0;
	if (a) fi_freeinfo(a);
	fi_freeinfo(l);
	*status = 0;
	return s;
}
*/
import "C"

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/mpigo/mpi/internal/hint"
	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/fabric"
	"github.com/mpigo/mpi/internal/wire"
)

// Built reports whether this build has the libfabric transport.
const Built = true

const (
	prefixSize = 16
	bufSize    = 64 << 10 // a posted receive buffer, and the largest message
	inlineMax  = bufSize - prefixSize - wire.HeaderSize
	pieceMax   = bufSize - prefixSize
	rtsSize    = prefixSize + wire.HeaderSize + 24
	poolSize   = 32
	slabSize   = 16 // send buffers of bufSize in the registered slab
	keepAlive  = 100 * time.Millisecond
)

// maxRead is the largest piece of a read or write of a peer's memory
// (tests lower it). Each piece that completes counts as progress for hang
// diagnosis (Moved): a read of gigabytes at a slow node's pace must show
// progress well within the hang report's threshold (MPICH's
// large_message, 2 GB to each of two ranks, was reported hung with pieces
// of 1 GiB under load).
var maxRead = 64 << 20

// readRefused, if set (tests), refuses the read of a frame's payload at
// off as a provider whose queue is full does (-FI_EAGAIN).
var readRefused func(off int) bool

// The kinds of message (the prefix's first byte).
const (
	kFrame    = 1 + iota // a whole frame: header and payload
	kRTS                 // a frame's header and where to read its payload
	kStart               // a frame's header and its payload's first piece
	kPiece               // the next piece of the frame being assembled
	kFIN                 // the payload of an RTS is read (id)
	kPing                // keep-alive of a sender that waits for FIN
	kFrameTok            // a frame whose header names a region (id: its token), and where to read it
	kDone                // the reader is done with the region of token id (in sequence)
	kGather              // frames gathered (fabric.Gather), one after the other
)

// regionSize is the size of a region's description after a kFrameTok's
// frame header: its address, key and length.
const regionSize = 24

func fiErr(st C.int) error {
	if st < 0 {
		st = -st
	}
	return errors.New(C.GoString(C.fi_strerror(st)))
}

// Available describes the libfabric this build is linked with and the
// providers it offers (FI_PROVIDER narrows them), or says why there are
// none.
func Available() (string, error) {
	v := C.fi_version()
	ver := fmt.Sprintf("libfabric %d.%d", v>>16, v&0xffff)
	var st, atomics C.int
	s := C.mg_describe(&st, &atomics)
	if s == nil {
		return "", fmt.Errorf("%s: no provider with reliable datagram endpoints and tagged messages: %w (fi_info lists them; FI_PROVIDER narrows them)", ver, fiErr(st))
	}
	defer C.free(unsafe.Pointer(s))
	list := C.GoString(s)
	first, rest, _ := strings.Cut(list, " ")
	if rest != "" {
		rest = ", else " + rest
	}
	windows := "windows by message (MPIGO_FABRIC_RMA=1: through its writes and reads)"
	if directProvider(first) {
		windows = "windows through its writes and reads"
	}
	if atomics != 0 {
		windows += ", and its atomics for accumulates on integers with MPIGO_FABRIC_ATOMICS=1"
	}
	return ver + ": " + first + " (libfabric's first choice, taken; FI_PROVIDER names another; " + windows + ")" + rest, nil
}

// item is a frame of a peer, in the peer's order, until it is delivered.
type item struct {
	done bool
	err  error
	hdr  [wire.HeaderSize]byte
	pay  unsafe.Pointer
	n    int
	got  int        // bytes assembled (kStart)
	pool *C.mg_buf  // a posted buffer to post again after delivery
	own  *C.mg_buf  // a buffer to free after delivery
	left int        // reads under way (kRTS)
	roff int        // bytes whose read is posted (kRTS)
	rts  rtsRequest // kRTS: where to read
	// gathered: pay holds frames gathered by the peer (kGather), each
	// with its header; hdr is unused.
	gathered bool
}

// A gatherBuf is the frames gathered for one peer (fabric.Gather): n
// bytes after b's prefix, count frames.
type gatherBuf struct {
	b        *C.mg_buf
	n, count int
}

// A gathered message fits a posted receive buffer.
var _ [bufSize - prefixSize - fabric.GatherCap]struct{}

type rtsRequest struct {
	id, raddr, key uint64
}

type arrival struct {
	kind int
	id   uint64
	buf  *C.mg_buf
	n    int
}

type peerIn struct {
	next    uint32
	early   map[uint32]arrival // arrived before their turn
	asm     *item              // the frame being assembled from pieces
	seqOut  uint32
	hasAddr bool
	addr    C.fi_addr_t
	name    []byte // the endpoint name addr was resolved from (peerGone)
}

// op is an operation under way, by its buffer (the completion's context).
type op struct {
	kind  int // opSend, opRecv, opRead
	peer  int
	it    *item
	size  int
	extra bool // a read's context of its own, freed when it completes
	slab  bool // a send buffer of the slab, which goes back to it
	rr    *regionRead
}

const (
	opSend = iota
	opRecv
	opRead
	opRegion // a read of ReadRegion (its context is a buffer of its own)
)

// region is a buffer this rank exported to a peer for reading in place
// (ExportRegion): registered for remote reads until the peer is done with
// it, fails, or the transport closes.
type region struct {
	peer       int
	mr         *C.struct_fid_mr
	raddr, key uint64
	n          int
	pin        runtime.Pinner
	// The RTS frame that carried the token, once it went: a frame of the
	// peer that answers it (wire.Header.AnswersRTS) releases the region too.
	sent    bool
	sendID  uint64
	context uint32
}

// remote is a region a peer exported to this rank, as its RTS described
// it (kFrameTok).
type remote struct {
	raddr, key uint64
	n          int
	sendID     uint64
	context    uint32
}

// doing names rr's operation in an error: "reading a region of" (rank
// N), or a window's.
func (rr *regionRead) doing() string {
	if rr.what == "" {
		return "reading a region of"
	}
	return rr.what
}

// regionRead is a ReadRegion or StartRegion under way: its reads left,
// its local registration of the destination (FI_MR_LOCAL), which Close
// ends if the transport closes under it, and the destination's pin, which
// Close ends if the reads outlived their wait (readDrain).
type regionRead struct {
	left int
	err  error
	lmr  *C.struct_fid_mr
	pin  runtime.Pinner

	peer  int
	token uint64
	// what names the operation in errors (doing): "" for a read of a
	// region, else a window's (winRemote.op).
	what string
	// done, for StartRegion, is told the outcome once, by step; nil for
	// ReadRegion, which waits itself.
	done     func(error)
	failedAt time.Time // when step first saw the peer failed
	told     bool      // done has been called
}

type rtsWait struct {
	peer int
	mr   *C.struct_fid_mr
	done chan error
}

// Transport is one rank's libfabric endpoint. It is safe for concurrent
// use.
type Transport struct {
	// moved counts the pieces of reads and writes of peers' memory that
	// completed (Moved).
	moved  atomic.Uint64
	cfg    Config
	u      *C.mg_ofi
	up     C.uintptr_t // u as a number, for the calls that take it so (mg_cq, mg_inject)
	addr   []byte
	prov   string
	rma    bool
	writes bool // remote writes too (RemoteMemory)
	// atomics: the provider applies a window's integer operations
	// (transport.Atomics; asked for with Config.Atomics).
	atomics bool
	raw     bool // reads ordered after the writes before them (a window's Flush reads)
	// noPings: no keep-alives (shm). They tell nothing there (the
	// provider reports no dead peer: the job tells the transport,
	// LosePeer), and an inject into the queue of a peer killed while it
	// held the queue's lock spins for ever inside libfabric (seen in
	// TestRemoteMemoryPeerKilled/shm).
	noPings bool
	inject  int // the largest message that goes by fi_tinject
	loop    *fabric.Loop
	eps     fabric.Endpoints

	// wmu serialises every call on the endpoint (FI_THREAD_DOMAIN).
	wmu      sync.Mutex
	closed   bool
	peers    []peerIn
	ops      map[unsafe.Pointer]*op
	outq     *fabric.Queues[*item] // each peer's frames, in order, until delivered
	slab     []*C.mg_buf           // free send buffers of the slab
	slabOps  map[*C.mg_buf]*op
	repost   []*C.mg_buf
	ctl      []ctlMsg // control messages the provider had no room for
	needRead []*item
	readPeer map[*item]int
	needEP   []int
	failed   []error
	nfailed  int // peers in failed
	// lostPeer holds, per peer, the loss LosePeer was told of, for a loop
	// that holds t.wmu meanwhile (retry) to see without the lock.
	lostPeer []atomic.Pointer[error]
	// full counts the times the provider had no room for a send (retry).
	full atomic.Int64
	// Gathering (fabric.Gather; nil with Config.NoGather): the policy and,
	// per peer, the frames gathered and not sent yet.
	gp   *fabric.Gather
	gath []gatherBuf
	// gatheredIn counts the messages of gathered frames received.
	gatheredIn atomic.Uint64
	fails      []fabric.Failure // to report
	rts        map[uint64]*rtsWait
	nextID     uint64
	inflight   int

	// The single-copy road (transport.RegionReader).
	regions     map[uint64]*region   // exported, by token
	nextTok     uint64               // the last token given
	remotes     []map[uint64]remote  // by peer: the regions it exported to this rank, by token
	rreads      map[*regionRead]bool // ReadRegions and StartRegions under way
	started     int                  // StartRegions under way (in rreads, done not yet told)
	readsOver   []*regionRead        // StartRegions whose reads have ended, for step to finish
	regionBusy  time.Time            // the last RTS of a region sent, or kDone received
	regionPing  time.Time            // the last keep-alive to the peers of exported regions
	regionStall []stallWatch         // by peer: keep-alives refused
	regionReads int                  // ReadRegions done by fi_read (tests)
	exposed     map[*exposure]bool   // memory exposed to the peers' puts and gets (RemoteMemory)
	liveRegs    int                  // registrations of the region road not yet closed (tests)
	nExported   atomic.Int64         // len(regions), read without wmu
	nRemotes    atomic.Int64         // entries of remotes, read without wmu

	dmu  sync.Mutex // held by the goroutine that delivers
	stop chan struct{}
	wg   sync.WaitGroup
}

type ctlMsg struct {
	peer, kind int
	id         uint64
}

// New opens a rank's endpoint, posts its receive buffers and starts its
// progress goroutine.
func New(cfg Config) (*Transport, error) {
	var u *C.mg_ofi
	var what *C.char
	norma := 0
	if cfg.NoRMA {
		norma = 1
	}
	local := 0
	if cfg.LocalMR {
		local = 1
	}
	var prov *C.char
	if cfg.Provider != "" {
		prov = C.CString(cfg.Provider)
		defer C.free(unsafe.Pointer(prov))
	}
	atomics := 0
	if cfg.Atomics {
		atomics = 1
	}
	var shmName *C.char
	if cfg.ShmName != "" {
		shmName = C.CString(cfg.ShmName)
		defer C.free(unsafe.Pointer(shmName))
	}
	if st := C.mg_init(&u, C.int(norma), C.int(local), C.int(atomics), prov, shmName, &what); st != 0 {
		return nil, fmt.Errorf("ofi: %s: %w (fi_info lists the providers; FI_PROVIDER chooses one)", C.GoString(what), fiErr(st))
	}
	t := &Transport{cfg: cfg, u: u, up: C.uintptr_t(uintptr(unsafe.Pointer(u))), peers: make([]peerIn, cfg.Size), ops: map[unsafe.Pointer]*op{},
		outq: fabric.NewQueues[*item](cfg.Size), slabOps: map[*C.mg_buf]*op{},
		failed: make([]error, cfg.Size), lostPeer: make([]atomic.Pointer[error], cfg.Size), rts: map[uint64]*rtsWait{}, readPeer: map[*item]int{}, stop: make(chan struct{}),
		regions: map[uint64]*region{}, remotes: make([]map[uint64]remote, cfg.Size), rreads: map[*regionRead]bool{},
		regionStall: make([]stallWatch, cfg.Size),
		rma:         u.rma != 0, writes: u.writes != 0, atomics: u.atomics != 0, raw: u.raw != 0, prov: C.GoString(C.mg_prov(u)) + "/" + C.GoString(C.mg_dom(u))}
	if !cfg.NoGather {
		t.gp, t.gath = fabric.NewGather(cfg.Size), make([]gatherBuf, cfg.Size)
	}
	t.addr = C.GoBytes(unsafe.Pointer(&u.name[0]), C.int(u.namelen))
	t.noPings = strings.HasPrefix(t.prov, "shm/")
	t.inject = min(int(u.inject), bufSize)
	t.loop = fabric.NewLoop(fabric.SpinFor(cfg.Spin), func() { C.mg_wake(t.u) })
	t.eps = fabric.Endpoints{Name: "ofi", What: "endpoint name", Addrs: cfg.Addrs, Closed: t.isClosed, Make: t.insert}
	t.eps.Init(cfg.Size)
	// The send slab: a provider that wants local buffers registered
	// (FI_MR_LOCAL) gets them registered once here, not at each send.
	// Without it (the registration failed), sends copy into buffers of
	// their own, registered each time.
	if C.mg_slab_init(u, slabSize, bufSize) == 0 {
		for k := 0; k < slabSize; k++ {
			b := C.mg_slab_buf(u, C.size_t(k))
			t.slab = append(t.slab, b)
			t.slabOps[b] = &op{kind: opSend, slab: true}
		}
	}
	t.wmu.Lock()
	for i := 0; i < poolSize; i++ {
		b := C.mg_alloc(bufSize)
		if b == nil {
			t.wmu.Unlock()
			t.Close()
			return nil, errors.New("ofi: out of memory for receive buffers")
		}
		t.ops[unsafe.Pointer(b)] = &op{kind: opRecv}
		t.post(b)
	}
	t.wmu.Unlock()
	t.wg.Add(1)
	go t.run()
	return t, nil
}

// localRegs counts the registrations for local access made so far (the
// tests' view of FI_MR_LOCAL).
func (t *Transport) localRegs() int {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return int(t.u.nreg)
}

// Inject returns the largest message (16-byte prefix, frame header and
// payload) that goes by fi_tinject: copied by the provider at once, with
// no completion and no registered buffer.
func (t *Transport) Inject() int { return t.inject }

// Address returns the endpoint's name, which peers need to reach it.
func (t *Transport) Address() []byte { return t.addr }

// Name returns "ofi".
func (t *Transport) Name() string { return "ofi" }

// Provider returns the provider and domain in use ("tcp;ofi_rxm/eth0").
func (t *Transport) Provider() string { return t.prov }

// RMA reports whether large frames go by remote reads (else in pieces).
func (t *Transport) RMA() bool { return t.rma }

// ChunkSize implements transport.Chunker.
func (t *Transport) ChunkSize() int { return ChunkSize }

// Ready does nothing: the transport delivers from New on.
func (t *Transport) Ready() {}

// post posts b as a receive buffer, or keeps it for the next step if the
// provider has no room; t.wmu is held.
func (t *Transport) post(b *C.mg_buf) {
	if t.closed {
		return
	}
	if st := C.mg_trecv(t.u, b); st != 0 {
		t.repost = append(t.repost, b)
	}
}

// isClosed reports whether Close has begun.
func (t *Transport) isClosed() bool {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return t.closed
}

// insert inserts peer's endpoint name into the address vector
// (fabric.Endpoints.Make).
func (t *Transport) insert(peer int, addr []byte) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.closed {
		return errors.New("ofi: transport closed")
	}
	var a C.fi_addr_t
	if st := C.mg_insert(t.u, unsafe.Pointer(&addr[0]), &a); st != 0 {
		return fmt.Errorf("ofi: rank %d cannot resolve the address of rank %d: %w", t.cfg.Rank, peer, fiErr(st))
	}
	t.peers[peer].addr = a
	t.peers[peer].hasAddr = true
	t.peers[peer].name = addr
	return nil
}

func putPrefix(b unsafe.Pointer, kind int, seq uint32, id uint64) {
	p := unsafe.Slice((*byte)(b), prefixSize)
	p[0] = byte(kind)
	p[1], p[2], p[3] = 0, 0, 0
	binary.LittleEndian.PutUint32(p[4:], seq)
	binary.LittleEndian.PutUint64(p[8:], id)
}

func data(b *C.mg_buf) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(b), C.sizeof_mg_buf) }

// sendBuf posts b (len bytes) to peer, progressing the queue while the
// provider has no room; b is freed when the send completes. t.wmu is
// held.
func (t *Transport) sendBuf(peer int, b *C.mg_buf, n int) error {
	err := t.retry(peer, func() C.ssize_t {
		return C.mg_tsend(t.u, b, C.size_t(n), t.peers[peer].addr, C.uint64_t(t.cfg.Rank))
	})
	if err != nil {
		t.dropSend(b)
		return err
	}
	t.track(b, peer, n)
	return nil
}

// track records the send of b (n bytes to peer) the provider took, until
// it completes; t.wmu is held.
func (t *Transport) track(b *C.mg_buf, peer, n int) {
	o := t.slabOps[b]
	if o == nil {
		o = &op{kind: opSend}
	}
	o.peer, o.size = peer, n
	t.ops[unsafe.Pointer(b)] = o
	t.inflight += n
}

// retry calls send (a send to peer) until the provider takes it, progressing
// the queue while it has no room (FI_EAGAIN); t.wmu is held.
func (t *Transport) retry(peer int, send func() C.ssize_t) error {
	var stall stallWatch
	for {
		st := send()
		if st == 0 {
			return nil
		}
		if st != -C.FI_EAGAIN {
			return fmt.Errorf("ofi: sending to rank %d: %w", peer, fiErr(C.int(st)))
		}
		// The provider makes room as its queue progresses.
		t.full.Add(1)
		t.poll()
		if stall.due() && t.peerGone(peer) {
			t.fail(peer, fmt.Errorf("ofi: rank %d is gone: the provider could not send to it for %v, and its address refuses connections", peer, stall.since()))
		}
		if err := t.failed[peer]; err != nil {
			return err
		}
		if e := t.lostPeer[peer].Load(); e != nil {
			// The job lost the peer (LosePeer, which waits for the lock
			// this loop holds): a provider that reports nothing of a dead
			// peer (shm) would have no room for it for ever.
			t.markFailed(peer, *e)
			return t.failed[peer]
		}
	}
}

// sendBufFor returns a send buffer for n bytes: one of the slab's if it
// has one free (after reaping the sends that completed, if none is) and n
// fits, else one of its own; nil if there is no memory. t.wmu is held.
func (t *Transport) sendBufFor(n int) *C.mg_buf {
	if len(t.slab) == 0 && len(t.slabOps) > 0 && n <= bufSize {
		t.poll()
	}
	if k := len(t.slab); k > 0 && n <= bufSize {
		b := t.slab[k-1]
		t.slab = t.slab[:k-1]
		return b
	}
	return C.mg_alloc(C.size_t(n))
}

// dropSend gives back the buffer of a send that is over (or never
// started): to the slab, or to the C heap. t.wmu is held.
func (t *Transport) dropSend(b *C.mg_buf) {
	if t.slabOps[b] != nil {
		t.slab = append(t.slab, b)
		return
	}
	C.mg_release(b)
}

// stallProbe is how long a send may be refused for want of room
// (FI_EAGAIN) before the transport looks whether its peer is gone, and
// how often it looks again.
const stallProbe = 500 * time.Millisecond

// stallWatch times a send the provider keeps refusing (FI_EAGAIN).
type stallWatch struct{ start, probed time.Time }

// due reports, at each refusal, whether it is time to look whether the
// peer is gone.
func (w *stallWatch) due() bool {
	now := time.Now()
	if w.start.IsZero() {
		w.start, w.probed = now, now
		return false
	}
	if now.Sub(w.probed) < stallProbe {
		return false
	}
	w.probed = now
	return true
}

func (w *stallWatch) since() time.Duration { return time.Since(w.start).Round(time.Millisecond) }

// peerGone reports whether peer's process is certainly gone, for a
// provider over TCP sockets (tcp, tcp;ofi_rxm, sockets): its endpoint
// name is a socket address, and a connection to it is refused once
// nobody listens there. Those providers never say so themselves: to a
// send to a dead peer they answer FI_EAGAIN for ever, retrying the
// connection (libfabric leaves when to give up to the application).
// A peer that is alive but busy, stopped or slow still accepts the
// connection, so it is never taken for gone. Other providers (verbs,
// efa, shm) report a dead peer through their completion queue; for
// them, and for any name that is not a socket address, this says no.
// t.wmu is held; the probe takes at most probeTimeout.
func (t *Transport) peerGone(peer int) bool {
	if !strings.Contains(t.prov, "tcp") && !strings.Contains(t.prov, "sockets") {
		return false
	}
	addr, ok := sockAddr(t.peers[peer].name)
	if !ok {
		return false
	}
	c, err := net.DialTimeout("tcp", addr, probeTimeout)
	if err == nil {
		c.Close()
		return false
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// probeTimeout bounds peerGone's connection attempt: a refusal comes at
// once; a host that does not answer is not taken for a dead peer.
const probeTimeout = 200 * time.Millisecond

// sockAddr returns the host:port of an endpoint name that is a struct
// sockaddr_in or sockaddr_in6 (the socket providers' FI_SOCKADDR_IN
// names: the family in host byte order, then the port and the address
// in network byte order).
func sockAddr(name []byte) (string, bool) {
	if len(name) < 2 {
		return "", false
	}
	family := binary.NativeEndian.Uint16(name)
	switch {
	case family == syscall.AF_INET && len(name) >= 8:
		ip := net.IP(name[4:8])
		return net.JoinHostPort(ip.String(), strconv.Itoa(int(binary.BigEndian.Uint16(name[2:4])))), true
	case family == syscall.AF_INET6 && len(name) >= 24:
		ip := net.IP(name[8:24])
		return net.JoinHostPort(ip.String(), strconv.Itoa(int(binary.BigEndian.Uint16(name[2:4])))), true
	}
	return "", false
}

// control sends a control message (FIN, ping), or keeps it for the next
// step if the provider has no room; t.wmu is held.
func (t *Transport) control(peer, kind int, id uint64) (refused bool) {
	if t.closed || t.failed[peer] != nil || !t.peers[peer].hasAddr || (kind == kPing && t.noPings) {
		return false
	}
	var st C.ssize_t
	if t.inject >= prefixSize {
		// Injected: no buffer, no completion.
		putPrefix(unsafe.Pointer(&t.u.ctl[0]), kind, 0, id)
		st = C.mg_inject(t.up, 1, prefixSize, t.peers[peer].addr, C.uint64_t(t.cfg.Rank))
	} else {
		b := t.sendBufFor(prefixSize)
		if b == nil {
			return false
		}
		putPrefix(data(b), kind, 0, id)
		if st = C.mg_tsend(t.u, b, prefixSize, t.peers[peer].addr, C.uint64_t(t.cfg.Rank)); st == 0 {
			t.track(b, peer, prefixSize)
		} else {
			t.dropSend(b)
		}
	}
	switch {
	case st == -C.FI_EAGAIN:
		if kind == kFIN {
			t.ctl = append(t.ctl, ctlMsg{peer, kind, id})
		}
		return true
	case st != 0:
		t.fail(peer, fmt.Errorf("ofi: rank %d lost rank %d: %w", t.cfg.Rank, peer, fiErr(C.int(st))))
	}
	return false
}

// Send sends f and returns when its payload may be reused.
func (t *Transport) Send(f wire.Frame) error {
	peer := f.To
	if err := fabric.CheckFrame("ofi", f, t.cfg.Size); err != nil {
		return err
	}
	if err := t.eps.Ensure(peer); err != nil {
		return err
	}
	n := len(f.Payload)
	if f.Flags&wire.FlagToken != 0 && f.Kind == wire.RTS && n == 0 {
		return t.sendTokenRTS(peer, f)
	}
	if t.nRemotes.Load() > 0 && f.Header.AnswersRTS() {
		t.wmu.Lock()
		t.dropRemote(peer, f.SendID, f.Context)
		t.wmu.Unlock()
	}
	switch {
	case prefixSize+wire.HeaderSize+n <= t.inject:
		return t.sendInject(peer, f)
	case n <= inlineMax:
		return t.sendInline(peer, f)
	case t.rma:
		return t.sendRTS(peer, f)
	}
	return t.sendPieces(peer, f)
}

// check says why nothing may go to peer now; t.wmu is held.
func (t *Transport) check(peer int) error {
	if t.closed {
		return errors.New("ofi: transport closed")
	}
	return t.failed[peer]
}

// sendInject sends a frame that fits the provider's inject size: written
// into the transport's scratch buffer (C memory) and injected, so that
// the send costs one call into the library, no buffer of its own, no
// registration and no completion to reap.
func (t *Transport) sendInject(peer int, f wire.Frame) error {
	n := len(f.Payload)
	m := prefixSize + wire.HeaderSize + n
	t.wmu.Lock()
	if err := t.check(peer); err != nil {
		t.wmu.Unlock()
		return err
	}
	if t.gp != nil {
		if gathered, err := t.gatherSmall(f, peer, n); gathered {
			return err
		}
	}
	d := unsafe.Pointer(t.u.scratch)
	p := &t.peers[peer]
	putPrefix(d, kFrame, p.seqOut, 0)
	f.Header.Marshal(unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), wire.HeaderSize), n)
	copy(unsafe.Slice((*byte)(unsafe.Add(d, prefixSize+wire.HeaderSize)), n), f.Payload)
	// poll, while the provider has no room, never sends from the scratch
	// buffer (control messages have their own).
	err := t.retry(peer, func() C.ssize_t {
		return C.mg_inject(t.up, 0, C.size_t(m), p.addr, C.uint64_t(t.cfg.Rank))
	})
	if err == nil {
		p.seqOut++
	}
	t.wmu.Unlock()
	t.loop.Nudge()
	return err
}

// sendInline sends a frame that fits in one message: copied into a send
// buffer (the slab's if one is free), which goes back when the send
// completes, so its send returns at once.
func (t *Transport) sendInline(peer int, f wire.Frame) error {
	n := len(f.Payload)
	m := prefixSize + wire.HeaderSize + n
	t.wmu.Lock()
	if err := t.check(peer); err != nil {
		t.wmu.Unlock()
		return err
	}
	if t.gp != nil {
		if gathered, err := t.gatherSmall(f, peer, n); gathered {
			return err
		}
	}
	b := t.sendBufFor(m)
	if b == nil {
		t.wmu.Unlock()
		return fmt.Errorf("ofi: sending to rank %d: out of memory", peer)
	}
	d := data(b)
	p := &t.peers[peer]
	putPrefix(d, kFrame, p.seqOut, 0)
	f.Header.Marshal(unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), wire.HeaderSize), n)
	copy(unsafe.Slice((*byte)(unsafe.Add(d, prefixSize+wire.HeaderSize)), n), f.Payload)
	p.seqOut++
	err := t.sendBuf(peer, b, m)
	t.wmu.Unlock()
	t.loop.Nudge()
	return err
}

// sendRTS registers the payload in place and tells peer where to read it;
// it returns when peer has read it (FIN) or failed.
func (t *Transport) sendRTS(peer int, f wire.Frame) error {
	n := len(f.Payload)
	var pin runtime.Pinner
	defer pin.Unpin()
	// The payload's address goes to C as a number: it may sit in an
	// object with pointers, which cgo's check would refuse, though the
	// provider reads only its bytes.
	pin.Pin(&f.Payload[0])
	t.wmu.Lock()
	if err := t.check(peer); err != nil {
		t.wmu.Unlock()
		return err
	}
	t.flushPeer(peer)
	// The request is injected where it fits (it does over every provider
	// of this machine), else it goes from a send buffer.
	var b *C.mg_buf
	d := unsafe.Pointer(t.u.scratch)
	if rtsSize > t.inject {
		if b = t.sendBufFor(rtsSize); b == nil {
			t.wmu.Unlock()
			return fmt.Errorf("ofi: sending to rank %d: out of memory", peer)
		}
		d = data(b)
	}
	f.Header.Marshal(unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), wire.HeaderSize), n)
	var mr *C.struct_fid_mr
	var raddr, key C.uint64_t
	if st := C.mg_reg(t.u, C.uintptr_t(uintptr(unsafe.Pointer(&f.Payload[0]))), C.size_t(n), 0, &mr, &raddr, &key); st != 0 {
		if b != nil {
			t.dropSend(b)
		}
		t.wmu.Unlock()
		return fmt.Errorf("ofi: registering %d bytes for rank %d: %w", n, peer, fiErr(st))
	}
	t.nextID++
	id := t.nextID
	w := &rtsWait{peer: peer, mr: mr, done: make(chan error, 1)}
	t.rts[id] = w
	p := &t.peers[peer]
	putPrefix(d, kRTS, p.seqOut, id)
	p.seqOut++
	r := unsafe.Slice((*byte)(unsafe.Add(d, prefixSize+wire.HeaderSize)), 24)
	binary.LittleEndian.PutUint64(r[0:], uint64(raddr))
	binary.LittleEndian.PutUint64(r[8:], uint64(key))
	binary.LittleEndian.PutUint64(r[16:], uint64(n))
	var err error
	if b != nil {
		err = t.sendBuf(peer, b, rtsSize)
	} else {
		err = t.retry(peer, func() C.ssize_t {
			return C.mg_inject(t.up, 0, rtsSize, p.addr, C.uint64_t(t.cfg.Rank))
		})
	}
	if err != nil {
		t.endRTS(id, err)
	}
	t.wmu.Unlock()
	t.loop.Nudge()
	err = t.await(w, peer)
	t.wmu.Lock()
	if w.mr != nil {
		C.mg_unreg(w.mr)
		w.mr = nil
	}
	t.wmu.Unlock()
	return err
}

// endRTS ends the wait of rendezvous id with err; t.wmu is held.
func (t *Transport) endRTS(id uint64, err error) {
	w := t.rts[id]
	if w == nil {
		return
	}
	delete(t.rts, id)
	w.done <- err
}

// await waits for w to end: polling the queue itself for a while, then
// leaving it to the progress goroutine, which may however be stuck in a
// handler (the engine's reply queue is full, and the reply
// sender is this goroutine): then, every millisecond, the sender
// progresses the queue itself, without delivering. Every 100 ms it sends
// the peer a keep-alive, whose failure says that the peer is gone.
func (t *Transport) await(w *rtsWait, peer int) error {
	// First the sender polls the queue itself, for up to keepAlive: the
	// peer's read progresses only as this endpoint does, and the
	// progress goroutine, asleep in poll(2) for up to 1 ms at a time, is
	// not always woken by it (over tcp;ofi_rxm a 64 KiB eager frame took
	// 730-790 µs one way; 54-85 µs with this spin).
	start := time.Now()
	one := fabric.OneProc()
	for i := 1; ; i++ {
		select {
		case err := <-w.done:
			return err
		default:
		}
		t.wmu.Lock()
		if !t.closed {
			t.poll()
		}
		t.wmu.Unlock()
		if i%64 == 0 && time.Since(start) >= keepAlive {
			break
		}
		yieldIf(one)
	}
	last := time.Now()
	var stall stallWatch // keep-alives the provider refuses (peerGone)
	return fabric.Await(w.done, &t.dmu, func(stuck bool) {
		ping := time.Since(last) >= keepAlive
		if !ping && !stuck {
			return
		}
		t.wmu.Lock()
		if !t.closed {
			if ping {
				if !t.control(peer, kPing, 0) {
					stall = stallWatch{}
				} else if stall.due() && t.peerGone(peer) {
					t.fail(peer, fmt.Errorf("ofi: rank %d is gone: the provider could not send it a keep-alive for %v, and its address refuses connections", peer, stall.since()))
				}
				last = time.Now()
			}
			t.poll()
		}
		t.wmu.Unlock()
		t.loop.Nudge()
	})
}

// yieldIf is the pause of a wait that polls the queue on the caller's
// goroutine: a yield of the processor with one (the progress goroutine
// may need it), else a hint to the core only, since a yield would hand a
// C caller's processor to another thread and back (fabric.OneProc).
func yieldIf(one bool) {
	if one {
		runtime.Gosched()
	} else {
		hint.Pause()
	}
}

// sendPieces sends a frame too large for one message, without remote
// reads: its header and first piece, then the rest in pieces, all in a
// row (t.wmu held throughout, so no other frame to peer comes between).
func (t *Transport) sendPieces(peer int, f wire.Frame) error {
	n := len(f.Payload)
	t.wmu.Lock()
	defer t.loop.Nudge()
	defer t.wmu.Unlock()
	if err := t.check(peer); err != nil {
		return err
	}
	t.flushPeer(peer)
	p := &t.peers[peer]
	for off := -1; off < n; {
		var b *C.mg_buf
		var m int
		if off < 0 {
			k := min(n, inlineMax)
			if b = t.sendBufFor(prefixSize + wire.HeaderSize + k); b == nil {
				return fmt.Errorf("ofi: sending to rank %d: out of memory", peer)
			}
			d := data(b)
			putPrefix(d, kStart, p.seqOut, 0)
			f.Header.Marshal(unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), wire.HeaderSize), n)
			copy(unsafe.Slice((*byte)(unsafe.Add(d, prefixSize+wire.HeaderSize)), k), f.Payload[:k])
			m, off = prefixSize+wire.HeaderSize+k, k
		} else {
			k := min(n-off, pieceMax)
			if b = t.sendBufFor(prefixSize + k); b == nil {
				return fmt.Errorf("ofi: sending to rank %d: out of memory", peer)
			}
			d := data(b)
			putPrefix(d, kPiece, p.seqOut, 0)
			copy(unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), k), f.Payload[off:off+k])
			m, off = prefixSize+k, off+k
		}
		p.seqOut++
		if err := t.sendBuf(peer, b, m); err != nil {
			return err
		}
		// Keep the copies under way within bounds.
		for t.inflight > 8<<20 && t.failed[peer] == nil && !t.closed {
			t.poll()
		}
		if err := t.check(peer); err != nil {
			return err
		}
	}
	return nil
}

// fail marks peer failed, once, ends what waits on it, and reports it
// (Config.OnPeerError); t.wmu is held.
func (t *Transport) fail(peer int, err error) {
	if t.markFailed(peer, err) {
		t.fails = append(t.fails, fabric.Failure{Peer: peer, Err: err})
	}
}

// LosePeer marks peer failed, as the job learnt from elsewhere (the
// launcher, another transport), and ends what waits on it here
// (transport.PeerLoser): over a provider that reports nothing of a dead
// peer (shm), a window's put or a read from it waits for ever otherwise.
// It reports nothing back.
func (t *Transport) LosePeer(peer int, err error) {
	if peer < 0 || peer >= t.cfg.Size {
		return
	}
	lerr := transport.PeerLost(fmt.Errorf("ofi: rank %d lost rank %d: %w", t.cfg.Rank, peer, err))
	// First where a loop that holds the lock waiting for the provider's
	// room sees it (retry), else the lock could wait for ever.
	t.lostPeer[peer].CompareAndSwap(nil, &lerr)
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if !t.closed {
		t.markFailed(peer, lerr)
	}
}

// markFailed marks peer failed, once, and ends what waits on it; it
// reports whether the peer was not failed before. t.wmu is held.
func (t *Transport) markFailed(peer int, err error) bool {
	if peer < 0 || peer >= t.cfg.Size || t.failed[peer] != nil {
		return false
	}
	t.failed[peer] = err
	t.nfailed++
	t.dropGathered(peer)
	for id, w := range t.rts {
		if w.peer == peer {
			t.endRTS(id, err)
		}
	}
	// The peer reads nothing more: its regions are released; it exports
	// nothing more either.
	for tok, r := range t.regions {
		if r.peer == peer {
			t.releaseRegion(tok, r)
		}
	}
	t.nRemotes.Add(-int64(len(t.remotes[peer])))
	t.remotes[peer] = nil
	return true
}

// poll reads the completion queue and acts on what completed: frees sent
// buffers, orders arrivals, starts reads, answers FIN. It never delivers
// and never waits; t.wmu is held. It reports whether anything completed.
func (t *Transport) poll() bool {
	got := false
	for !t.closed {
		// Each read is a call into C and, over tcp, a system call
		// (epoll_wait): read again only after a full batch.
		n := C.mg_cq(t.up)
		if n == -C.FI_EAVAIL {
			got = true
			t.cqError()
			continue
		}
		if n <= 0 {
			break
		}
		got = true
		for i := 0; i < int(n); i++ {
			e := &t.u.ents[i]
			t.complete(e.op_context, int(e.len), uint64(e.tag))
		}
		if n < C.MG_ENTS {
			break
		}
	}
	return got
}

func (t *Transport) cqError() {
	var ctx unsafe.Pointer
	var prov C.int
	var msg [256]C.char
	e := C.mg_cqerr(t.u, &ctx, &prov, &msg[0], C.size_t(len(msg)))
	if e == -C.FI_EAGAIN {
		return
	}
	o := t.ops[ctx]
	if o == nil {
		return
	}
	err := fiErr(e)
	if s := C.GoString(&msg[0]); s != "" {
		err = fmt.Errorf("%w (%s)", err, s)
	}
	switch o.kind {
	case opSend:
		delete(t.ops, ctx)
		t.inflight -= o.size
		t.dropSend((*C.mg_buf)(ctx))
		t.fail(o.peer, fmt.Errorf("ofi: rank %d lost rank %d: %w", t.cfg.Rank, o.peer, err))
	case opRegion:
		delete(t.ops, ctx)
		C.mg_release((*C.mg_buf)(ctx))
		if o.rr.err == nil {
			o.rr.err = fmt.Errorf("ofi: rank %d %s rank %d: %w", t.cfg.Rank, o.rr.doing(), o.peer, err)
		}
		t.readEnded(o.rr)
		t.fail(o.peer, fmt.Errorf("ofi: rank %d lost rank %d: %w", t.cfg.Rank, o.peer, err))
	case opRead:
		delete(t.ops, ctx)
		if o.extra {
			C.mg_release((*C.mg_buf)(ctx))
		}
		it := o.it
		it.left--
		if it.err == nil {
			it.err = fmt.Errorf("ofi: rank %d reading a message of rank %d: %w", t.cfg.Rank, o.peer, err)
		}
		if it.left == 0 {
			it.done = true
		}
		t.fail(o.peer, fmt.Errorf("ofi: rank %d lost rank %d: %w", t.cfg.Rank, o.peer, err))
	case opRecv:
		if e == C.FI_ECANCELED || t.closed {
			return
		}
		// A message larger than a buffer, or some other failure of the
		// receive: nothing of ours sends those, so whoever did is no
		// peer we understand. The buffer goes back.
		t.post((*C.mg_buf)(ctx))
	}
}

// complete acts on the successful completion of the operation of buffer
// ctx: n bytes and tag of a receive.
func (t *Transport) complete(ctx unsafe.Pointer, n int, tag uint64) {
	o := t.ops[ctx]
	if o == nil {
		return
	}
	switch o.kind {
	case opSend:
		delete(t.ops, ctx)
		t.inflight -= o.size
		t.dropSend((*C.mg_buf)(ctx))
	case opRegion:
		delete(t.ops, ctx)
		C.mg_release((*C.mg_buf)(ctx))
		t.moved.Add(1)
		t.readEnded(o.rr)
	case opRead:
		delete(t.ops, ctx)
		if o.extra {
			C.mg_release((*C.mg_buf)(ctx))
		}
		it := o.it
		it.left--
		t.moved.Add(1)
		if it.left == 0 && it.err == nil && it.roff == it.n {
			it.done = true
			t.control(o.peer, kFIN, it.rts.id)
		}
	case opRecv:
		b := (*C.mg_buf)(ctx)
		peer := int(tag & 0xffffffff)
		if n < prefixSize || peer >= t.cfg.Size {
			t.post(b)
			return
		}
		pre := unsafe.Slice((*byte)(data(b)), prefixSize)
		kind := int(pre[0])
		seq := binary.LittleEndian.Uint32(pre[4:])
		id := binary.LittleEndian.Uint64(pre[8:])
		switch kind {
		case kFIN:
			if w := t.rts[id]; w != nil && w.peer == peer {
				t.endRTS(id, nil)
			}
			t.post(b)
			return
		case kPing:
			t.post(b)
			return
		}
		if t.failed[peer] != nil {
			t.post(b)
			return
		}
		p := &t.peers[peer]
		if seq != p.next {
			if p.early == nil {
				p.early = map[uint32]arrival{}
			}
			p.early[seq] = arrival{kind, id, b, n}
			return
		}
		t.arrive(peer, arrival{kind, id, b, n})
		for {
			a, ok := p.early[p.next]
			if !ok {
				break
			}
			delete(p.early, p.next)
			t.arrive(peer, a)
		}
	}
}

// arrive takes the next message of peer in its order; t.wmu is held.
func (t *Transport) arrive(peer int, a arrival) {
	p := &t.peers[peer]
	p.next++
	if t.gp != nil && a.kind != kDone && a.kind != kPiece {
		t.gp.Heard(peer) // a frame: the next to peer may answer it
	}
	d := data(a.buf)
	bad := func(why string) {
		t.post(a.buf)
		t.fail(peer, fmt.Errorf("ofi: rank %d received from rank %d %s", t.cfg.Rank, peer, why))
	}
	queue := func(it *item) { t.outq.Push(peer, it) }
	switch a.kind {
	case kFrame:
		if a.n < prefixSize+wire.HeaderSize {
			bad(fmt.Sprintf("a message of %d bytes, shorter than a frame header", a.n))
			return
		}
		it := &item{done: true, pool: a.buf, pay: unsafe.Add(d, prefixSize+wire.HeaderSize), n: a.n - prefixSize - wire.HeaderSize}
		copy(it.hdr[:], unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), wire.HeaderSize))
		queue(it)
	case kGather:
		if a.n < prefixSize+2*wire.HeaderSize {
			bad(fmt.Sprintf("a message of gathered frames of %d bytes", a.n))
			return
		}
		// Split when delivered (SplitGathered checks it whole first).
		queue(&item{done: true, gathered: true, pool: a.buf, pay: unsafe.Add(d, prefixSize), n: a.n - prefixSize})
	case kRTS:
		if a.n != rtsSize {
			bad(fmt.Sprintf("a rendezvous request of %d bytes", a.n))
			return
		}
		it := &item{}
		copy(it.hdr[:], unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), wire.HeaderSize))
		r := unsafe.Slice((*byte)(unsafe.Add(d, prefixSize+wire.HeaderSize)), 24)
		it.rts = rtsRequest{id: a.id, raddr: binary.LittleEndian.Uint64(r[0:]), key: binary.LittleEndian.Uint64(r[8:])}
		it.n = int(binary.LittleEndian.Uint64(r[16:]))
		t.post(a.buf)
		if it.n <= 0 || it.n > wire.MaxPayload {
			t.fail(peer, fmt.Errorf("ofi: rank %d received from rank %d a rendezvous of %d bytes", t.cfg.Rank, peer, it.n))
			return
		}
		if it.own = C.mg_alloc(C.size_t(it.n)); it.own == nil {
			t.fail(peer, fmt.Errorf("ofi: rank %d: out of memory for a message of %d bytes from rank %d", t.cfg.Rank, it.n, peer))
			return
		}
		it.pay = data(it.own)
		queue(it)
		t.readPeer[it] = peer
		if p.hasAddr {
			t.startRead(peer, it)
		} else {
			t.needRead = append(t.needRead, it)
			if !slices.Contains(t.needEP, peer) {
				t.needEP = append(t.needEP, peer)
			}
		}
	case kStart:
		if a.n < prefixSize+wire.HeaderSize {
			bad(fmt.Sprintf("a message of %d bytes, shorter than a frame header", a.n))
			return
		}
		it := &item{}
		copy(it.hdr[:], unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), wire.HeaderSize))
		_, total, err := wire.Unmarshal(it.hdr[:])
		k := a.n - prefixSize - wire.HeaderSize
		if err != nil || total < k || total > wire.MaxPayload {
			bad(fmt.Sprintf("a frame's first piece of %d bytes (%v)", k, err))
			return
		}
		if it.own = C.mg_alloc(C.size_t(max(total, 1))); it.own == nil {
			bad(fmt.Sprintf("a frame of %d bytes, for which there is no memory", total))
			return
		}
		it.pay, it.n = data(it.own), total
		copy(unsafe.Slice((*byte)(it.pay), total), unsafe.Slice((*byte)(unsafe.Add(d, prefixSize+wire.HeaderSize)), k))
		it.got = k
		t.post(a.buf)
		it.done = it.got == it.n
		if !it.done {
			p.asm = it
		}
		queue(it)
	case kFrameTok:
		if a.n != prefixSize+wire.HeaderSize+regionSize {
			bad(fmt.Sprintf("a frame with a region of %d bytes", a.n))
			return
		}
		it := &item{done: true, pool: a.buf}
		copy(it.hdr[:], unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), wire.HeaderSize))
		h, size, err := wire.Unmarshal(it.hdr[:])
		if err != nil || size != 0 || h.Token != a.id || h.Flags&wire.FlagToken == 0 {
			bad(fmt.Sprintf("a region's frame that does not name it (%v)", err))
			return
		}
		r := unsafe.Slice((*byte)(unsafe.Add(d, prefixSize+wire.HeaderSize)), regionSize)
		if t.remotes[peer] == nil {
			t.remotes[peer] = map[uint64]remote{}
		}
		if _, ok := t.remotes[peer][a.id]; !ok {
			t.nRemotes.Add(1)
		}
		t.remotes[peer][a.id] = remote{raddr: binary.LittleEndian.Uint64(r[0:]), key: binary.LittleEndian.Uint64(r[8:]),
			n: int(binary.LittleEndian.Uint64(r[16:])), sendID: h.SendID, context: h.Context}
		queue(it)
	case kDone:
		t.post(a.buf)
		if r := t.regions[a.id]; r != nil && r.peer == peer {
			t.releaseRegion(a.id, r)
			t.regionBusy = time.Now()
		}
	case kPiece:
		it := p.asm
		k := a.n - prefixSize
		if it == nil || it.got+k > it.n {
			bad("a piece of no frame")
			return
		}
		copy(unsafe.Slice((*byte)(unsafe.Add(it.pay, it.got)), k), unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), k))
		it.got += k
		t.post(a.buf)
		if it.got == it.n {
			it.done = true
			p.asm = nil
		}
	default:
		bad(fmt.Sprintf("a message of kind %d", a.kind))
	}
}

// startRead reads the payload of rendezvous it from peer; t.wmu is held.
// A read the provider has no room for waits for the next step.
func (t *Transport) startRead(peer int, it *item) {
	if t.failed[peer] != nil {
		it.err, it.done = t.failed[peer], it.left == 0
		return
	}
	for it.roff < it.n {
		off := it.roff
		k := min(it.n-off, maxRead)
		// Each piece needs its own context: the first piece's is the
		// buffer itself, further ones a small buffer of their own.
		ctx := it.own
		if off > 0 {
			if ctx = C.mg_alloc(0); ctx == nil {
				it.err, it.done = errors.New("ofi: out of memory"), it.left == 0
				return
			}
		}
		var st C.ssize_t
		if readRefused != nil && readRefused(off) {
			st = -C.FI_EAGAIN
		} else {
			st = C.mg_read(t.u, it.own, C.size_t(off), C.size_t(k), t.peers[peer].addr, C.uint64_t(it.rts.raddr+uint64(off)), C.uint64_t(it.rts.key), ctx)
		}
		if st != 0 {
			if off > 0 {
				C.mg_release(ctx)
			}
			if st == -C.FI_EAGAIN {
				// No room: the next step posts the rest (from roff).
				t.needRead = append(t.needRead, it)
				return
			}
			it.err = fmt.Errorf("ofi: rank %d reading a message of rank %d: %w", t.cfg.Rank, peer, fiErr(C.int(st)))
			it.done = it.left == 0
			t.fail(peer, it.err)
			return
		}
		it.left++
		it.roff += k
		t.ops[unsafe.Pointer(ctx)] = &op{kind: opRead, peer: peer, it: it, extra: off > 0}
	}
}

// Moved implements transport.Mover: the pieces of reads and writes of
// peers' memory (a rendezvous's payload, a region, a window's memory)
// that completed, each at most maxRead bytes.
func (t *Transport) Moved() uint64 { return t.moved.Load() }

// step polls the queue once, retries what the provider had no room for,
// and delivers the frames that are complete. The caller holds t.dmu.
func (t *Transport) step(wait bool) bool {
	var ready []*item
	var readyPeer []int
	t.wmu.Lock()
	if t.closed {
		t.wmu.Unlock()
		return false
	}
	if t.gp != nil {
		t.flushGathered()
		if wait {
			t.gp.Waited()
		}
	}
	got := t.poll()
	if len(t.repost) > 0 {
		rp := t.repost
		t.repost = nil
		for _, b := range rp {
			t.post(b)
		}
	}
	if len(t.ctl) > 0 {
		c := t.ctl
		t.ctl = nil
		for _, m := range c {
			t.control(m.peer, m.kind, m.id)
		}
	}
	var tell []func()
	if t.started > 0 {
		tell = t.finishReads()
	}
	t.outq.Take(func(it *item) bool { return it.done }, func(pr int, it *item) {
		ready = append(ready, it)
		readyPeer = append(readyPeer, pr)
	})
	fails := t.fails
	t.fails = nil
	need := t.needEP
	t.needEP = nil
	t.wmu.Unlock()
	// The ends of reads first: their answers free the senders' buffers.
	for _, f := range tell {
		f()
	}
	for i, it := range ready {
		if it.err == nil {
			t.deliver(readyPeer[i], it)
		}
	}
	if len(ready) > 0 {
		t.wmu.Lock()
		for _, it := range ready {
			t.release(it)
		}
		t.wmu.Unlock()
	}
	fabric.Report(fails, t.cfg.OnPeerError)
	for _, p := range need {
		if err := t.eps.Ensure(p); err != nil {
			t.wmu.Lock()
			t.fail(p, err)
			t.wmu.Unlock()
		}
	}
	t.wmu.Lock()
	if (len(t.regions) > 0 || t.started > 0) && !t.closed && time.Since(t.regionPing) >= keepAlive {
		t.pingRegions()
	}
	if len(t.needRead) > 0 && !t.closed {
		nr := t.needRead
		t.needRead = nil
		for _, it := range nr {
			pr := t.readPeer[it]
			if t.peers[pr].hasAddr || t.failed[pr] != nil {
				t.startRead(pr, it)
			} else {
				t.needRead = append(t.needRead, it)
			}
		}
	}
	t.wmu.Unlock()
	return got || len(ready) > 0 || len(tell) > 0
}

// release gives back an item's buffers once delivered; t.wmu is held.
func (t *Transport) release(it *item) {
	delete(t.readPeer, it)
	if it.pool != nil {
		t.post(it.pool)
	}
	if it.own != nil && it.left == 0 {
		C.mg_release(it.own)
	}
}

func (t *Transport) deliver(peer int, it *item) {
	if it.gathered {
		err := fabric.SplitGathered(unsafe.Slice((*byte)(it.pay), it.n), func(h wire.Header, p []byte) {
			t.handle(peer, h, p)
		})
		if err != nil {
			t.wmu.Lock()
			t.fail(peer, fmt.Errorf("ofi: receiving from rank %d: %w", peer, err))
			t.wmu.Unlock()
			return
		}
		t.gatheredIn.Add(1)
		return
	}
	h, n, err := wire.Unmarshal(it.hdr[:])
	if err == nil && n != it.n {
		err = fmt.Errorf("a frame header that says %d bytes of payload for %d", n, it.n)
	}
	if err != nil {
		t.wmu.Lock()
		t.fail(peer, fmt.Errorf("ofi: receiving from rank %d: %w", peer, err))
		t.wmu.Unlock()
		return
	}
	var pay []byte
	if it.n > 0 {
		pay = unsafe.Slice((*byte)(it.pay), it.n)
	}
	t.handle(peer, h, pay)
}

// handle gives the handler a frame of peer.
func (t *Transport) handle(peer int, h wire.Header, pay []byte) {
	if t.nExported.Load() > 0 && h.AnswersRTS() {
		t.wmu.Lock()
		t.releaseAnswered(peer, h.SendID, h.Context)
		t.wmu.Unlock()
	}
	t.cfg.Handler(wire.Frame{Header: h, From: peer, To: t.cfg.Rank, Payload: pay})
}

// pending says whether operations of ours are under way (regions
// exported too, and memory exposed to a provider that moves data only as
// its endpoint is progressed: the peer's reads and writes of them
// progress only as this endpoint does); t.wmu is held.
func (t *Transport) pending() bool {
	return t.outq.Busy() || len(t.rts) > 0 || t.inflight > 0 || len(t.repost) > 0 || len(t.ctl) > 0 || len(t.regions) > 0 || t.started > 0 ||
		(t.u.manual != 0 && len(t.exposed) > 0)
}

// streamSpin is how long after the last sign of a peer reading this
// rank's regions (an RTS of a region sent, a kDone received) the progress
// goroutine keeps polling instead of sleeping (transferring).
const streamSpin = 10 * time.Millisecond

// transferring reports whether large messages are being read: by this
// rank (StartRegion), or from it, as far as it can tell (a region's RTS
// is out, and regions were sent or released within streamSpin). Over
// providers whose progress is the application's (tcp;ofi_rxm), the data
// of a read moves only while both ends poll: the reader's provider
// receives it, the owner's sends the next part as the socket takes it.
// Woken from poll(2) for each part, the owner sent less at a time, and
// the stream ran at the pace of its wake-ups. t.wmu is held.
func (t *Transport) transferring() bool {
	if t.started > 0 {
		return true
	}
	if len(t.regions) == 0 || time.Since(t.regionBusy) >= streamSpin {
		return false
	}
	for _, r := range t.regions {
		if r.sent {
			return true
		}
	}
	return false
}

// run progresses the endpoint until Close (fabric.Loop): it spins after
// the last event, naps while a wait polls, then sleeps on the queue's wait
// descriptor.
func (t *Transport) run() {
	defer t.wg.Done()
	t.loop.Run(t.stop, func() bool {
		// A goroutine that holds the lock is progressing the queue
		// already; waiting for it would park this one and have the
		// holder's unlock wake it again (a thread woken for nothing
		// at every poll of a polling wait, measured over UCX).
		if !t.dmu.TryLock() {
			return false
		}
		defer t.dmu.Unlock()
		return t.step(false)
	}, t.sleep)
}

// sleep sleeps until the queue has work or the loop is woken: 1 ms while
// operations of ours are under way, else 100 ms. While large messages
// are being read (transferring) it only yields the processor and the
// core: the loop keeps polling.
func (t *Transport) sleep() {
	t.wmu.Lock()
	closed := t.closed
	if !closed {
		// Frames gathered after the loop's last step go now: the kick
		// of the first of them wakes only a loop already marked
		// asleep, and one that came between the step and the mark
		// would leave them waiting out the whole sleep.
		t.flushGathered()
	}
	ms := 100
	if t.pending() {
		ms = 1
	}
	busy := t.transferring()
	t.wmu.Unlock()
	if busy {
		// Yield the core too: on a node where the peer (or anyone) waits
		// for one, polling must not keep it from them.
		runtime.Gosched()
		C.sched_yield()
		return
	}
	if !closed {
		C.mg_sleep(t.u, C.int(ms))
	}
}

// Poll implements transport.Polled: a waiting goroutine progresses the
// endpoint itself, so that a reply is seen without a wake-up.
func (t *Transport) Poll() bool {
	// Each poll keeps the progress goroutine napping: a wait marks the
	// loop when it begins and every 16 polls, which may be longer apart
	// than the loop's nap (fabric.WaiterNap), after which it would step
	// alongside the waiter.
	t.loop.MarkWait()
	if !t.dmu.TryLock() {
		return false
	}
	got := t.step(true)
	t.dmu.Unlock()
	return got
}

// MarkWait implements transport.Polled: the progress goroutine naps while
// a wait polls the queue (fabric.Loop).
func (t *Transport) MarkWait() { t.loop.MarkWait() }

// EndWait implements transport.Polled: the waiter stops polling, so the
// progress goroutine must watch the queue; if it sleeps it is woken to
// wait on the queue again (the waiter's polls may have taken the event
// it slept on).
func (t *Transport) EndWait() { t.loop.EndWait() }

// Close ends the sends under way with an error, closes the endpoint and
// frees its memory. It is safe to call more than once.
func (t *Transport) Close() error {
	t.wmu.Lock()
	if t.closed || t.stop == nil {
		t.wmu.Unlock()
		return nil
	}
	select {
	case <-t.stop:
	default:
		close(t.stop)
	}
	t.wmu.Unlock()
	C.mg_wake(t.u)
	t.wg.Wait()
	// The StartRegions still under way end with an error, told once the
	// locks are free (this defer runs after their unlocks).
	var tell []func()
	defer func() {
		for _, f := range tell {
			f()
		}
	}()
	t.dmu.Lock()
	defer t.dmu.Unlock()
	t.wmu.Lock()
	defer t.wmu.Unlock()
	// Frames gathered and not sent yet go now, and have a moment to
	// leave before the endpoint closes.
	if t.flushGathered() {
		for end := time.Now().Add(100 * time.Millisecond); t.inflight > 0 && time.Now().Before(end); {
			t.poll()
		}
	}
	for p := range t.gath {
		t.dropGathered(p)
	}
	t.closed = true
	// No region survives the transport: exported ones are released, and
	// the destinations of reads under way lose their registrations (their
	// ReadRegion returns an error).
	for tok, r := range t.regions {
		t.releaseRegion(tok, r)
	}
	for e := range t.exposed {
		e.release()
	}
	for rr := range t.rreads {
		if rr.lmr != nil {
			C.mg_unreg(rr.lmr)
			rr.lmr = nil
			t.liveRegs--
		}
		if rr.err == nil {
			rr.err = errors.New("ofi: transport closed")
		}
		if rr.done != nil && !rr.told {
			rr.told = true
			done, err := rr.done, rr.err
			tell = append(tell, func() { done(err) })
		}
	}
	t.started = 0
	t.readsOver = nil
	for i := range t.remotes {
		t.nRemotes.Add(-int64(len(t.remotes[i])))
		t.remotes[i] = nil
	}
	for id, w := range t.rts {
		if w.mr != nil {
			C.mg_unreg(w.mr)
			w.mr = nil
		}
		t.endRTS(id, errors.New("ofi: transport closed"))
	}
	// Closing the endpoint ends every operation on it: the provider
	// touches none of their buffers after, so they are freed here (with
	// their registrations, before the domain they belong to).
	C.mg_close(t.u)
	// Every receive buffer (posted, waiting to be, or holding a frame not
	// delivered) and every send's and read's context is in t.ops; a
	// read's destination is its item's, in its peer's queue.
	for ctx, o := range t.ops {
		if (o.kind == opRead && !o.extra) || o.slab {
			continue // the slab is freed with the endpoint's memory
		}
		C.mg_release((*C.mg_buf)(ctx))
	}
	// Reads that outlived their ReadRegion (readDrain) can no longer
	// write into their destinations.
	for rr := range t.rreads {
		rr.pin.Unpin()
	}
	for _, pr := range t.outq.Active() {
		for _, it := range t.outq.Peer(pr) {
			if it.own != nil {
				C.mg_release(it.own)
			}
		}
	}
	t.outq.Reset()
	for i := range t.peers {
		p := &t.peers[i]
		p.early, p.asm = nil, nil
	}
	t.ops, t.readPeer, t.repost, t.slab = nil, nil, nil, nil
	// The buffers' registrations are closed: now the domain can be.
	C.mg_done(t.u)
	return nil
}

// The single-copy road (transport.RegionReader). A buffer the engine
// exports to a peer is registered for remote reads and named by a token,
// a small number of this transport's. The token's address, key and
// length travel with the engine's RTS that carries the token: Send sends
// that frame as kFrameTok, the frame followed by the region's
// description, so the peer's transport knows the region before its engine
// sees the token (the mapping and the frame are one message). The peer's
// ReadRegion reads straight into the posted receive buffer with fi_read,
// then tells this rank it is done with the token (kDone, in the peer's
// sequence of frames, so before the Fin its engine answers), which
// releases the registration. A region is also released when a frame of
// the peer answers its RTS without a read (wire.Header.AnswersRTS: a CTS, as when the
// receive takes a derived datatype, or a withdrawn message), when the peer
// fails (the transport sends keep-alives to the peers of regions), and at
// Close.

// ExportRegion registers b for peer to read in place and returns its
// token (transport.RegionReader); false if the provider has no remote
// reads or b cannot be registered. b stays pinned and registered until
// peer is done with it.
func (t *Transport) ExportRegion(peer int, b []byte) (uint64, bool) {
	if !t.rma || len(b) == 0 || peer < 0 || peer >= t.cfg.Size {
		return 0, false
	}
	r := &region{peer: peer, n: len(b)}
	// The address goes to C as a number, as sendRTS's: the pin keeps the
	// memory in place and alive until the region is released.
	r.pin.Pin(&b[0])
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.closed || t.failed[peer] != nil {
		r.pin.Unpin()
		return 0, false
	}
	var raddr, key C.uint64_t
	if st := C.mg_reg(t.u, C.uintptr_t(uintptr(unsafe.Pointer(&b[0]))), C.size_t(len(b)), 0, &r.mr, &raddr, &key); st != 0 {
		r.pin.Unpin()
		return 0, false
	}
	r.raddr, r.key = uint64(raddr), uint64(key)
	t.nextTok++
	t.regions[t.nextTok] = r
	t.liveRegs++
	t.nExported.Add(1)
	return t.nextTok, true
}

// Exports reports whether peer can read this rank's buffers in place: the
// provider has remote reads (transport.RegionReader).
func (t *Transport) Exports(peer int) bool {
	return t.rma && peer >= 0 && peer < t.cfg.Size
}

// releaseRegion ends the export of r (token tok); t.wmu is held.
func (t *Transport) releaseRegion(tok uint64, r *region) {
	delete(t.regions, tok)
	C.mg_unreg(r.mr)
	r.mr = nil
	r.pin.Unpin()
	t.liveRegs--
	t.nExported.Add(-1)
}

// releaseAnswered releases the region whose RTS (sendID, in context)
// peer has answered; t.wmu is held.
func (t *Transport) releaseAnswered(peer int, sendID uint64, context uint32) {
	for tok, r := range t.regions {
		if r.peer == peer && r.sent && r.sendID == sendID && r.context == context {
			t.releaseRegion(tok, r)
		}
	}
}

// dropRemote forgets the region of peer whose RTS (sendID, in context)
// this rank answers without reading it; t.wmu is held.
func (t *Transport) dropRemote(peer int, sendID uint64, context uint32) {
	for tok, r := range t.remotes[peer] {
		if r.sendID == sendID && r.context == context {
			delete(t.remotes[peer], tok)
			t.nRemotes.Add(-1)
		}
	}
}

// pingRegions sends a keep-alive to each peer that has regions of this
// rank to read, and to each peer whose regions this rank reads
// (StartRegion), so that one that dies meanwhile is noticed (a refused
// keep-alive, or peerGone): its regions are released, the reads from it
// end; t.wmu is held.
func (t *Transport) pingRegions() {
	t.regionPing = time.Now()
	var done []int
	ping := func(peer int) {
		if slices.Contains(done, peer) {
			return
		}
		done = append(done, peer)
		if !t.peers[peer].hasAddr || t.failed[peer] != nil {
			return
		}
		if !t.control(peer, kPing, 0) {
			t.regionStall[peer] = stallWatch{}
		} else if t.regionStall[peer].due() && t.peerGone(peer) {
			t.fail(peer, fmt.Errorf("ofi: rank %d is gone: the provider could not send it a keep-alive for %v, and its address refuses connections", peer, t.regionStall[peer].since()))
		}
	}
	for _, r := range t.regions {
		ping(r.peer)
	}
	// The peers whose regions this rank reads (StartRegion): a read from
	// a peer that died may never end by itself.
	if t.started > 0 {
		for rr := range t.rreads {
			if rr.done != nil && !rr.told {
				ping(rr.peer)
			}
		}
	}
}

// sendTokenRTS sends an RTS that carries the token of a region exported
// to peer, followed by the region's address, key and length (kFrameTok),
// in sequence with peer's other frames.
func (t *Transport) sendTokenRTS(peer int, f wire.Frame) error {
	const m = prefixSize + wire.HeaderSize + regionSize
	t.wmu.Lock()
	if err := t.check(peer); err != nil {
		t.wmu.Unlock()
		return err
	}
	r := t.regions[f.Token]
	if r == nil || r.peer != peer {
		// No region of ours for peer (an engine's bug): the frame goes
		// as it is, and the peer's read of the token fails, so that its
		// engine falls back to CTS and Data.
		t.wmu.Unlock()
		if prefixSize+wire.HeaderSize <= t.inject {
			return t.sendInject(peer, f)
		}
		return t.sendInline(peer, f)
	}
	t.flushPeer(peer)
	r.sent, r.sendID, r.context = true, f.SendID, f.Context
	t.regionBusy = time.Now()
	var b *C.mg_buf
	d := unsafe.Pointer(t.u.scratch)
	if m > t.inject {
		if b = t.sendBufFor(m); b == nil {
			t.wmu.Unlock()
			return fmt.Errorf("ofi: sending to rank %d: out of memory", peer)
		}
		d = data(b)
	}
	p := &t.peers[peer]
	putPrefix(d, kFrameTok, p.seqOut, f.Token)
	f.Header.Marshal(unsafe.Slice((*byte)(unsafe.Add(d, prefixSize)), wire.HeaderSize), 0)
	desc := unsafe.Slice((*byte)(unsafe.Add(d, prefixSize+wire.HeaderSize)), regionSize)
	binary.LittleEndian.PutUint64(desc[0:], r.raddr)
	binary.LittleEndian.PutUint64(desc[8:], r.key)
	binary.LittleEndian.PutUint64(desc[16:], uint64(r.n))
	var err error
	if b != nil {
		p.seqOut++
		err = t.sendBuf(peer, b, m)
	} else if err = t.retry(peer, func() C.ssize_t {
		return C.mg_inject(t.up, 0, m, p.addr, C.uint64_t(t.cfg.Rank))
	}); err == nil {
		p.seqOut++
	}
	t.wmu.Unlock()
	t.loop.Nudge()
	return err
}

// sendDone tells peer, in sequence with its other frames, that this rank
// is done with the region of token tok; t.wmu is held.
func (t *Transport) sendDone(peer int, tok uint64) {
	if t.closed || t.failed[peer] != nil || !t.peers[peer].hasAddr {
		return
	}
	t.flushPeer(peer)
	p := &t.peers[peer]
	var err error
	if prefixSize <= t.inject {
		// The control buffer is written at each try: the polls between
		// tries may send control messages from it.
		if err = t.retry(peer, func() C.ssize_t {
			putPrefix(unsafe.Pointer(&t.u.ctl[0]), kDone, p.seqOut, tok)
			return C.mg_inject(t.up, 1, prefixSize, p.addr, C.uint64_t(t.cfg.Rank))
		}); err == nil {
			p.seqOut++
		}
	} else if b := t.sendBufFor(prefixSize); b == nil {
		err = errors.New("out of memory")
	} else {
		putPrefix(data(b), kDone, p.seqOut, tok)
		p.seqOut++
		err = t.sendBuf(peer, b, prefixSize)
	}
	if err != nil {
		// The peer would keep the region registered: it is as good as lost.
		t.fail(peer, fmt.Errorf("ofi: rank %d lost rank %d: %w", t.cfg.Rank, peer, err))
	}
}

// readDrain bounds how long ReadRegion waits, once its peer has failed,
// for the provider to end the reads under way into the destination.
const readDrain = 2 * time.Second

// ReadRegion copies len(dst) bytes at offset off of the region peer
// exported as token into dst, by fi_read straight into dst
// (transport.RegionReader), and waits for them. A token is read once (the
// engine reads a message in one call, from offset 0): this rank is then
// done with it, whether the read succeeded or not, and the peer releases
// its registration. A dead peer ends the wait with an error: its reads
// fail, or its keep-alives are refused and its address refuses
// connections.
func (t *Transport) ReadRegion(peer int, token uint64, off int, dst []byte) error {
	rr, err := t.beginRead(peer, token, off, dst, nil)
	if rr == nil {
		return err
	}
	t.wmu.Unlock()
	if !t.awaitRegion(peer, rr) {
		// The provider kept the reads after the peer failed: dst stays
		// pinned and registered until Close has closed the endpoint.
		t.wmu.Unlock()
		return rr.err
	}
	// t.wmu is held, and no read into dst is under way (or the endpoint
	// is closed).
	err = t.endRead(rr)
	t.wmu.Unlock()
	t.loop.Nudge()
	return err
}

// StartRegion starts the reads of ReadRegion and returns at once
// (transport.RegionStarter): the receiver of a window of large messages
// has the reads of all of them under way together, and the peer's
// provider goes from one to the next without waiting for this rank to
// ask. done is told the outcome once, on the goroutine that progresses
// the endpoint, with no lock of the transport held, when the reads have
// ended (the peer has been told that this rank is done with the token
// before); if the read is over at once (nothing to read), before
// StartRegion returns. An error means that nothing started, and done is
// not called.
func (t *Transport) StartRegion(peer int, token uint64, off int, dst []byte, done func(error)) error {
	if done == nil {
		return errors.New("ofi: StartRegion without a done function")
	}
	rr, err := t.beginRead(peer, token, off, dst, done)
	if rr == nil {
		if err == nil {
			done(nil)
		}
		return err
	}
	t.started++
	if rr.left == 0 {
		// Nothing went to the provider (its post failed): step finishes it.
		t.readsOver = append(t.readsOver, rr)
	}
	t.wmu.Unlock()
	// The progress goroutine polls while reads are under way (sleep).
	t.loop.Nudge()
	return nil
}

// beginRead checks a read of the region token of peer and posts its
// reads, in pieces of at most maxRead bytes. It returns with t.wmu held
// and the read under way (its error, if posting failed, in rr.err), or
// with no read (nil) and t.wmu free: err says why, or nil when there was
// nothing to read.
func (t *Transport) beginRead(peer int, token uint64, off int, dst []byte, done func(error)) (*regionRead, error) {
	if peer < 0 || peer >= t.cfg.Size {
		return nil, fmt.Errorf("ofi: read of a region of rank %d of %d", peer, t.cfg.Size)
	}
	if err := t.eps.Ensure(peer); err != nil {
		return nil, err
	}
	t.wmu.Lock()
	rm, ok := t.remotes[peer][token]
	if ok {
		delete(t.remotes[peer], token)
		t.nRemotes.Add(-1)
	}
	if err := t.check(peer); err != nil {
		t.wmu.Unlock()
		return nil, err
	}
	if !ok {
		t.wmu.Unlock()
		return nil, fmt.Errorf("ofi: rank %d has no region %d of rank %d to read", t.cfg.Rank, token, peer)
	}
	if off < 0 || off > rm.n || len(dst) > rm.n-off || len(dst) == 0 {
		t.sendDone(peer, token)
		t.wmu.Unlock()
		if len(dst) == 0 && off >= 0 && off <= rm.n {
			return nil, nil
		}
		return nil, fmt.Errorf("ofi: read of %d bytes at %d of a region of %d bytes of rank %d", len(dst), off, rm.n, peer)
	}
	rr := &regionRead{peer: peer, token: token, done: done}
	rr.pin.Pin(&dst[0])
	t.rreads[rr] = true
	err := t.postRMA(rr, false, uintptr(unsafe.Pointer(&dst[0])), len(dst), rm.raddr+uint64(off), rm.key, nil)
	if err != nil && rr.err == nil {
		rr.err = err
	}
	return rr, nil
}

// endRead ends rr, whose reads are over: dst is unpinned and its local
// registration closed, and the peer is told that this rank is done with
// the token. It returns the read's outcome; t.wmu is held.
func (t *Transport) endRead(rr *regionRead) error {
	t.endRMA(rr)
	if rr.err == nil {
		t.regionReads++
	}
	t.sendDone(rr.peer, rr.token)
	return rr.err
}

// readEnded counts the end of one read of rr (a completion, or an error
// completion); a StartRegion whose reads are all over goes to step to be
// finished (not here: poll, which calls this, must not send). t.wmu is
// held.
func (t *Transport) readEnded(rr *regionRead) {
	rr.left--
	if rr.left == 0 && rr.done != nil && !rr.told {
		t.readsOver = append(t.readsOver, rr)
	}
}

// finishReads ends the StartRegions whose reads are over, and those whose
// peer failed more than readDrain ago with reads the provider still
// keeps (their destinations stay pinned until Close), and returns the
// calls that tell their outcome, for step to make with no lock held.
// t.wmu is held.
func (t *Transport) finishReads() []func() {
	var tell []func()
	over := t.readsOver
	t.readsOver = nil
	for _, rr := range over {
		if rr.told || !t.rreads[rr] {
			continue
		}
		rr.told = true
		t.started--
		err := t.endRead(rr)
		done := rr.done
		tell = append(tell, func() { done(err) })
	}
	if t.started == 0 || t.nfailed == 0 {
		// The walk below is for reads from failed peers; a step while a
		// large read streams in must not pay for it (it took a sixth of
		// the receiver's time at 4 MiB).
		return tell
	}
	now := time.Now()
	for rr := range t.rreads {
		if rr.done == nil || rr.told || t.failed[rr.peer] == nil {
			continue
		}
		if rr.failedAt.IsZero() {
			rr.failedAt = now
			continue
		}
		if now.Sub(rr.failedAt) > readDrain {
			rr.told = true
			t.started--
			err := rr.err
			if err == nil {
				err = t.failed[rr.peer]
			}
			done := rr.done
			tell = append(tell, func() { done(err) })
		}
	}
	return tell
}

// awaitRegion waits for the reads of rr to end, polling the queue itself
// (it may run on the goroutine that delivers, inside the handler), and
// returns with t.wmu held. Every keepAlive it sends peer a keep-alive; a
// peer that is gone fails. It reports false if the reads were still under
// way readDrain after the peer failed.
func (t *Transport) awaitRegion(peer int, rr *regionRead) bool {
	last := time.Now()
	one := fabric.OneProc()
	var stall stallWatch
	var failedAt time.Time
	for spin := 1; ; spin++ {
		t.wmu.Lock()
		if rr.left == 0 || t.closed {
			return true
		}
		t.poll()
		if rr.left == 0 {
			return true
		}
		if spin%64 != 0 && t.failed[peer] == nil {
			// The clock is read every 64 polls only.
			t.wmu.Unlock()
			yieldIf(one)
			continue
		}
		now := time.Now()
		if t.failed[peer] != nil {
			if failedAt.IsZero() {
				failedAt = now
			} else if now.Sub(failedAt) > readDrain {
				if rr.err == nil {
					rr.err = t.failed[peer]
				}
				return false
			}
		} else if now.Sub(last) >= keepAlive {
			last = now
			if !t.control(peer, kPing, 0) {
				stall = stallWatch{}
			} else if stall.due() && t.peerGone(peer) {
				t.fail(peer, fmt.Errorf("ofi: rank %d is gone: the provider could not send it a keep-alive for %v, and its address refuses connections", peer, stall.since()))
			}
		}
		t.wmu.Unlock()
		yieldIf(one)
	}
}

// regionStats returns, for the tests, the ReadRegions done by fi_read,
// the registrations of the region road still open, and the regions of
// peers known and not read.
func (t *Transport) regionStats() (reads, live, remotes int) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return t.regionReads, t.liveRegs, int(t.nRemotes.Load())
}

// The cgo calls of the windows' road (window.go).

// registerWindow registers n bytes at addr for the peers' reads and
// writes, and returns the registration, and the address and key the
// peers reach the memory by; t.wmu is held.
func (t *Transport) registerWindow(addr uintptr, n int) (unsafe.Pointer, uint64, uint64, error) {
	var mr *C.struct_fid_mr
	var raddr, key C.uint64_t
	if st := C.mg_reg(t.u, C.uintptr_t(addr), C.size_t(n), 1, &mr, &raddr, &key); st != 0 {
		return nil, 0, 0, fiErr(st)
	}
	return unsafe.Pointer(mr), uint64(raddr), uint64(key), nil
}

// unregister closes a registration of registerWindow.
func unregister(mr unsafe.Pointer) { C.mg_unreg((*C.struct_fid_mr)(mr)) }

// postRMA posts the writes of the n bytes at base to raddr of rr's peer
// (write), or the reads of them into base, in pieces of at most maxRead
// bytes, each completing rr's operation once (opRegion); with runs, the
// bytes go to (or come from) those runs at raddr, one after the other.
// The memory at base is registered for local access first where the
// provider wants that. It returns why not all could be posted (rr.left
// counts those that were); t.wmu is held.
func (t *Transport) postRMA(rr *regionRead, write bool, base uintptr, n int, raddr, key uint64, runs []transport.Run) error {
	peer := rr.peer
	// A window's operation comes after the frames sent before it.
	t.flushPeer(peer)
	w := C.int(0)
	if write {
		w = 1
	}
	if t.u.local != 0 {
		if st := C.mg_reg_local(t.u, C.uintptr_t(base), C.size_t(n), w, &rr.lmr); st != 0 {
			rr.lmr = nil
			return fmt.Errorf("ofi: registering %d bytes for %s rank %d: %w", n, rr.doing(), peer, fiErr(st))
		}
		t.liveRegs++
	}
	if runs == nil {
		runs = []transport.Run{{Off: 0, Len: n}}
	}
	addr := t.peers[peer].addr
	delivered := C.int(0)
	if !t.raw {
		delivered = 1
	}
	pos := 0
	for _, run := range runs {
		for o := 0; o < run.Len; o += maxRead {
			k := min(run.Len-o, maxRead)
			ctx := C.mg_alloc(0)
			if ctx == nil {
				return errors.New("ofi: out of memory")
			}
			p, ra := C.uintptr_t(base+uintptr(pos+o)), C.uint64_t(raddr+uint64(run.Off+o))
			err := t.retry(peer, func() C.ssize_t {
				if write {
					return C.mg_rwrite(t.u, p, C.size_t(k), rr.lmr, addr, ra, C.uint64_t(key), ctx, delivered)
				}
				return C.mg_rread(t.u, p, C.size_t(k), rr.lmr, addr, ra, C.uint64_t(key), ctx)
			})
			if err != nil {
				C.mg_release(ctx)
				return fmt.Errorf("ofi: %s rank %d: %w", rr.doing(), peer, err)
			}
			rr.left++
			t.ops[unsafe.Pointer(ctx)] = &op{kind: opRegion, peer: peer, rr: rr, extra: true}
		}
		pos += run.Len
	}
	return nil
}

// postAtomics posts aop on the integers of size bytes at as[i].Off from
// raddr of rr's peer, one atomic operation each (each completing rr's
// operation once, opRegion). The operands, values compared and results
// are at base, three uint64s an integer in that order, in memory pinned
// by the caller, registered for local access first where the provider
// wants that. It returns why not all could be posted (rr.left counts
// those that were); t.wmu is held.
func (t *Transport) postAtomics(rr *regionRead, aop transport.AtomicOp, size int, base uintptr, as []transport.Atomic, raddr, key uint64) error {
	peer := rr.peer
	// A window's operation comes after the frames sent before it.
	t.flushPeer(peer)
	if t.u.local != 0 {
		if st := C.mg_reg_local(t.u, C.uintptr_t(base), C.size_t(24*len(as)), 2, &rr.lmr); st != 0 {
			rr.lmr = nil
			return fmt.Errorf("ofi: registering %d bytes for %s rank %d: %w", 24*len(as), rr.doing(), peer, fiErr(st))
		}
		t.liveRegs++
	}
	addr := t.peers[peer].addr
	for i, a := range as {
		ctx := C.mg_alloc(0)
		if ctx == nil {
			return errors.New("ofi: out of memory")
		}
		p := base + uintptr(24*i)
		ra := C.uint64_t(raddr + uint64(a.Off))
		err := t.retry(peer, func() C.ssize_t {
			return C.mg_amo(t.u, C.int(aop), C.int(size), C.uintptr_t(p), C.uintptr_t(p+8), C.uintptr_t(p+16), rr.lmr, addr, ra, C.uint64_t(key), ctx)
		})
		if err != nil {
			C.mg_release(ctx)
			return fmt.Errorf("ofi: %s rank %d: %w", rr.doing(), peer, err)
		}
		rr.left++
		t.ops[unsafe.Pointer(ctx)] = &op{kind: opRegion, peer: peer, rr: rr, extra: true}
	}
	return nil
}

// endRMA ends rr, whose operations are over: its memory is unpinned and
// its local registration closed; t.wmu is held.
func (t *Transport) endRMA(rr *regionRead) {
	delete(t.rreads, rr)
	rr.pin.Unpin()
	if rr.lmr != nil {
		C.mg_unreg(rr.lmr)
		rr.lmr = nil
		t.liveRegs--
	}
}

// postCopied posts the write of a copy of src to raddr of rr's peer, from
// a buffer of the transport's that the write's completion frees (each
// completes rr's operation once, opRegion), so that src may be reused at
// once. t.wmu is held.
func (t *Transport) postCopied(rr *regionRead, src []byte, raddr, key uint64) error {
	peer := rr.peer
	t.flushPeer(peer)
	b := C.mg_alloc(C.size_t(len(src)))
	if b == nil {
		return errors.New("ofi: out of memory")
	}
	copy(unsafe.Slice((*byte)(data(b)), len(src)), src)
	delivered := C.int(0)
	if !t.raw {
		delivered = 1
	}
	addr := t.peers[peer].addr
	err := t.retry(peer, func() C.ssize_t {
		return C.mg_bwrite(t.u, b, C.size_t(len(src)), addr, C.uint64_t(raddr), C.uint64_t(key), delivered)
	})
	if err != nil {
		C.mg_release(b)
		return fmt.Errorf("ofi: %s rank %d: %w", rr.doing(), peer, err)
	}
	rr.left++
	t.ops[unsafe.Pointer(b)] = &op{kind: opRegion, peer: peer, rr: rr, extra: true}
	return nil
}

// The gathering of small frames (fabric.Gather): the frames gathered for
// a peer wait in a send buffer, after its prefix, and go as one message of
// kind kGather at the next step, when the buffer is full, or before any
// other message of the sequence to that peer.

// gatherSmall gathers f, with its payload of n bytes, for peer if it is
// small and the policy takes it, and reports whether it did; if so it has
// released t.wmu. If not, frames gathered for peer go first, and the
// caller sends f alone. t.wmu is held.
func (t *Transport) gatherSmall(f wire.Frame, peer, n int) (bool, error) {
	if !fabric.Small(wire.HeaderSize+n) || !t.gp.Take(peer) {
		t.flushPeer(peer)
		return false, nil
	}
	first, err := t.gather(f, peer, n)
	t.wmu.Unlock()
	if first {
		// The progress goroutine sends them at its next step, which
		// must come soon even if the program makes no MPI call for a
		// while: from a nap or a sleep too.
		t.loop.Kick()
	} else {
		t.loop.Nudge()
	}
	return true, err
}

// gather adds f, with its payload of n bytes, to the frames gathered for
// peer, sending those first if f does not fit, and reports whether it is
// the first frame gathered since the last flush. t.wmu is held.
func (t *Transport) gather(f wire.Frame, peer, n int) (bool, error) {
	g := &t.gath[peer]
	if g.n+wire.HeaderSize+n > fabric.GatherCap {
		t.flushPeer(peer)
	}
	if g.b == nil {
		if g.b = t.sendBufFor(prefixSize + fabric.GatherCap); g.b == nil {
			return false, fmt.Errorf("ofi: sending to rank %d: out of memory", peer)
		}
	}
	g.n += fabric.PutFrame(unsafe.Slice((*byte)(unsafe.Add(data(g.b), prefixSize)), fabric.GatherCap)[g.n:], f, n)
	g.count++
	return t.gp.Added(peer), nil
}

// flushGathered sends the frames gathered for every peer and reports
// whether there were any; t.wmu is held.
func (t *Transport) flushGathered() bool { return t.gp.Flush(t.sendGathered) }

// flushPeer sends the frames gathered for peer, if any, so that what goes
// to peer otherwise comes after them; t.wmu is held.
func (t *Transport) flushPeer(peer int) { t.gp.FlushPeer(peer, t.sendGathered) }

// sendGathered sends the frames gathered for peer as one message (a lone
// frame as itself); a failure fails the peer, and the next step reports
// it (the frames' Sends had returned). t.wmu is held.
func (t *Transport) sendGathered(peer int) {
	g := &t.gath[peer]
	b, n, count := g.b, g.n, g.count
	*g = gatherBuf{}
	if b == nil {
		return
	}
	if n == 0 || t.check(peer) != nil {
		t.dropSend(b)
		return
	}
	kind := kGather
	if count == 1 {
		kind = kFrame
	}
	p := &t.peers[peer]
	putPrefix(data(b), kind, p.seqOut, 0)
	p.seqOut++
	if err := t.sendBuf(peer, b, prefixSize+n); err != nil {
		t.fail(peer, fmt.Errorf("ofi: sending %d frames gathered to rank %d: %w", count, peer, err))
	}
}

// dropGathered gives back what was gathered for peer, whose frames will
// not go (it failed, or the transport closed); t.wmu is held.
func (t *Transport) dropGathered(peer int) {
	if t.gp == nil {
		return
	}
	if b := t.gath[peer].b; b != nil {
		t.dropSend(b)
	}
	t.gath[peer] = gatherBuf{}
	t.gp.Drop(peer)
}
