//go:build cgo && mpigo_ucx

package ucx

/*
#cgo LDFLAGS: -lucp -lucs
#define _GNU_SOURCE
#include <ucp/api/ucp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct mg_ucx mg_ucx;
typedef struct { mg_ucx *u; int peer; } mg_peer;

// One rank's context and worker. failed and nfailed are written by the
// endpoints' error callback (plain C, during ucp_worker_progress) and read
// by Go under the same lock.
struct mg_ucx {
	ucp_context_h ctx;
	ucp_worker_h w;
	int n;
	ucp_ep_h *eps;
	mg_peer *peers;
	int *failed;
	int nfailed;
	int efd;
	int wake[2];
	ucp_address_t *addr;
	size_t addrlen;
	// What mg_poll found, and the request of the last mg_recv or
	// mg_recv_pay: out-parameters in C memory, so that Go passes no
	// pointer of its own (which would move its variables to the heap at
	// every poll).
	uint64_t ptag;
	size_t plen;
	void *preq;
	// mg_poll's: whether its progress did anything, the message it left
	// for mg_recv, and its receive's error.
	unsigned made;
	ucp_tag_message_h pmsg;
	int pst;
	// mg_send's requests and the payload's error, likewise (under the
	// Go side's wmu, as every call on the worker).
	void *sreq, *sreq2;
	int sst2;
	// How many receives of pulled data (mg_recv_data) and raw sends
	// (mg_send_raw) have ended: their callbacks count them, in a call on
	// the worker, so that Go tests its requests of either kind only after
	// one of them ended (a test is a call into C, and a pull of 64
	// messages keeps 64 under way).
	uint64_t rdone, sdone;
};

static void mg_data_cb(void *req, ucs_status_t st, const ucp_tag_recv_info_t *info, void *arg) {
	((mg_ucx *)arg)->rdone++;
}

static void mg_raw_cb(void *req, ucs_status_t st, void *arg) {
	((mg_ucx *)arg)->sdone++;
}

// A send's header and, for a small message, its payload, in C memory that
// lives until the send completes.
typedef struct {
	ucp_dt_iov_t iov[2];
	char hdr[64];
	char data[];
} mg_sbuf;

static void mg_err_cb(void *arg, ucp_ep_h ep, ucs_status_t st) {
	mg_peer *p = arg;
	if (p->u->failed[p->peer] == 0) {
		p->u->failed[p->peer] = (int)st;
		p->u->nfailed++;
	}
	char c = 1;
	if (write(p->u->wake[1], &c, 1) < 0) {}
}

static void mg_free_u(mg_ucx *u) {
	if (u->addr) ucp_worker_release_address(u->w, u->addr);
	if (u->w) ucp_worker_destroy(u->w);
	if (u->ctx) ucp_cleanup(u->ctx);
	if (u->wake[0] >= 0) close(u->wake[0]);
	if (u->wake[1] >= 0) close(u->wake[1]);
	free(u->eps); free(u->peers); free((void *)u->failed);
	free(u);
}

// mg_init makes the context and worker of a rank of a job of n ranks. It
// returns a ucs_status_t; *what names the step that failed.
static int mg_init(mg_ucx **out, int n, const char **what) {
	mg_ucx *u = calloc(1, sizeof *u);
	if (!u) { *what = "calloc"; return UCS_ERR_NO_MEMORY; }
	u->n = n; u->wake[0] = u->wake[1] = -1;
	u->eps = calloc(n, sizeof *u->eps);
	u->peers = calloc(n, sizeof *u->peers);
	u->failed = calloc(n, sizeof *u->failed);
	if (!u->eps || !u->peers || !u->failed) { *what = "calloc"; mg_free_u(u); return UCS_ERR_NO_MEMORY; }
	for (int i = 0; i < n; i++) { u->peers[i].u = u; u->peers[i].peer = i; }
	if (pipe2(u->wake, O_NONBLOCK | O_CLOEXEC) != 0) { *what = "pipe2"; mg_free_u(u); return UCS_ERR_IO_ERROR; }
	ucp_config_t *cfg;
	ucs_status_t st = ucp_config_read(NULL, NULL, &cfg);
	if (st != UCS_OK) { *what = "ucp_config_read"; mg_free_u(u); return st; }
	ucp_params_t p;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_PARAM_FIELD_FEATURES;
	p.features = UCP_FEATURE_TAG | UCP_FEATURE_WAKEUP | UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64;
	st = ucp_init(&p, cfg, &u->ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK) { u->ctx = NULL; *what = "ucp_init"; mg_free_u(u); return st; }
	ucp_worker_params_t wp;
	memset(&wp, 0, sizeof wp);
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
	st = ucp_worker_create(u->ctx, &wp, &u->w);
	if (st != UCS_OK) { u->w = NULL; *what = "ucp_worker_create"; mg_free_u(u); return st; }
	st = ucp_worker_get_address(u->w, &u->addr, &u->addrlen);
	if (st != UCS_OK) { u->addr = NULL; *what = "ucp_worker_get_address"; mg_free_u(u); return st; }
	st = ucp_worker_get_efd(u->w, &u->efd);
	if (st != UCS_OK) { *what = "ucp_worker_get_efd"; mg_free_u(u); return st; }
	*out = u;
	return UCS_OK;
}

// mg_ep makes the endpoint to peer, with peer failure detection if the
// transports that reach it have it (UCX 1.13's shared-memory transports do
// not: *nodetect is then set, and the endpoint made without it). With
// *nodetect set by the caller it is made without at once.
static int mg_ep(mg_ucx *u, int peer, const void *addr, int *nodetect) {
	ucp_ep_params_t p;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
	p.address = addr;
	p.err_mode = *nodetect ? UCP_ERR_HANDLING_MODE_NONE : UCP_ERR_HANDLING_MODE_PEER;
	p.err_handler.cb = mg_err_cb;
	p.err_handler.arg = &u->peers[peer];
	ucs_status_t st = ucp_ep_create(u->w, &p, &u->eps[peer]);
	if (st == UCS_ERR_UNREACHABLE && !*nodetect) {
		*nodetect = 1;
		p.err_mode = UCP_ERR_HANDLING_MODE_NONE;
		st = ucp_ep_create(u->w, &p, &u->eps[peer]);
	}
	return st;
}

static mg_sbuf *mg_sbuf_alloc(size_t data) { return malloc(sizeof(mg_sbuf) + data); }

// MG_PAY marks the tag of a payload sent apart from its header; MG_CTL a
// request of the transport's own (a pull of a region: region.go), from
// the rank in the low bits; MG_DATA the data of a pulled region, tagged
// with the reader's read id in the low bits.
#define MG_PAY (1ULL << 63)
#define MG_CTL (1ULL << 62)
#define MG_DATA (1ULL << 61)
// MG_GATHER (gatherBit) marks a message of gathered frames,
// from the rank in the low bits; it is probed and received as a whole
// message is.

// mg_send sends sb (its header, and len bytes of payload: in sb->data if
// copied, else at pay, which the caller keeps pinned until the send
// completes) to peer with tag. A payload not copied goes as a message of
// its own, contiguous and in place, tagged tag|MG_PAY, right after the
// header alone: UCX's rendezvous carries a contiguous buffer without
// copies, where a vector of header and payload went through its buffers
// (4 MiB over tcp: 0.8-1.0 GB/s against 2.8 in one piece). It returns 0
// when everything completed (sb freed), 1 when something is pending
// (u->sreq, the header's or the whole message's, and u->sreq2, the
// payload's, each NULL if done; sb to free once both are), or a negative
// ucs_status_t (sb freed, nothing pending). u->sst2 is the payload's
// error when it could not be sent after its header was (u->sreq may be
// pending).
//
// With keep set (a copied message in the transport's scratch buffer), sb
// is not freed when the send completes at once or fails: it is freed
// only once a pending send is done, as any other.
//
// u and sb come as numbers, as in mg_poll: a pointer argument costs cgo's
// pointer check at every call (1% of a sender's time in a stream of
// 8-byte messages, measured).
static int mg_send(uintptr_t up, int peer, uint64_t tag, uintptr_t sbp, uintptr_t pay, size_t len, int copied, int keep) {
	mg_ucx *u = (mg_ucx *)up;
	mg_sbuf *sb = (mg_sbuf *)sbp;
	void **req = &u->sreq, **req2 = &u->sreq2;
	int *st2 = &u->sst2;
	ucp_request_param_t p;
	memset(&p, 0, sizeof p);
	*req = NULL; *req2 = NULL; *st2 = 0;
	if (!u->eps[peer]) { if (!keep) free(sb); return UCS_ERR_NOT_CONNECTED; } // never a crash
	if (copied || len == 0) {
		void *r = ucp_tag_send_nbx(u->eps[peer], sb->hdr, 64 + len, tag, &p);
		if (r == NULL) { if (!keep) free(sb); return 0; }
		if (UCS_PTR_IS_ERR(r)) { if (!keep) free(sb); return UCS_PTR_STATUS(r); }
		*req = r;
		return 1;
	}
	void *h = ucp_tag_send_nbx(u->eps[peer], sb->hdr, 64, tag, &p);
	if (UCS_PTR_IS_ERR(h)) { free(sb); return UCS_PTR_STATUS(h); }
	void *d = ucp_tag_send_nbx(u->eps[peer], (void *)pay, len, tag | MG_PAY, &p);
	if (UCS_PTR_IS_ERR(d)) {
		*st2 = UCS_PTR_STATUS(d);
		d = NULL;
		if (h == NULL) { free(sb); return *st2; }
	}
	if (h == NULL && d == NULL) { free(sb); return 0; }
	*req = h; *req2 = d;
	return 1;
}

// mg_poll progresses the worker (if progress is set; u->made says whether
// it did anything), then takes the next header or whole message, if any
// (u->ptag, u->plen). One that fits buf (cap bytes) is received there at
// once: it returns 1, with u->preq the receive's request if it is pending
// and u->pst its error. One longer is left for mg_recv (u->pmsg): 2. None:
// 0. One call instead of progress, probe and receive: each crossing into C
// costs (cgo's switch of stacks, and its check of a pointer argument,
// which is why u and buf come as numbers).
static int mg_poll(uintptr_t up, int progress, uintptr_t buf, size_t cap) {
	mg_ucx *u = (mg_ucx *)up;
	u->preq = NULL; u->pst = 0;
	if (progress) u->made = ucp_worker_progress(u->w);
	ucp_tag_recv_info_t info;
	// Headers and whole messages only: a payload sent apart is received
	// where its header says (mg_recv_pay).
	ucp_tag_message_h m = ucp_tag_probe_nb(u->w, 0, MG_PAY | MG_DATA, 1, &info);
	if (!m) return 0;
	u->ptag = info.sender_tag; u->plen = info.length;
	if (info.length > cap) { u->pmsg = m; return 2; }
	ucp_request_param_t p;
	memset(&p, 0, sizeof p);
	void *r = ucp_tag_msg_recv_nbx(u->w, (void *)buf, info.length, m, &p);
	if (UCS_PTR_IS_ERR(r)) u->pst = UCS_PTR_STATUS(r);
	else u->preq = r;
	return 1;
}

// mg_recv receives the message m mg_poll left into buf: 0 done, 1 pending
// (u->preq), or a negative ucs_status_t.
static int mg_recv(mg_ucx *u, ucp_tag_message_h m, void *buf, size_t len) {
	void **req = &u->preq;
	ucp_request_param_t p;
	memset(&p, 0, sizeof p);
	void *r = ucp_tag_msg_recv_nbx(u->w, buf, len, m, &p);
	if (r == NULL) return 0;
	if (UCS_PTR_IS_ERR(r)) return UCS_PTR_STATUS(r);
	*req = r;
	return 1;
}

// mg_recv_pay posts the receive of the next payload peer sent apart from
// its header, of len bytes, into buf: 0 done, 1 pending (u->preq), or a
// negative ucs_status_t. Payloads of one peer match their receives in
// the order of both.
static int mg_recv_pay(mg_ucx *u, int peer, void *buf, size_t len) {
	void **req = &u->preq;
	ucp_request_param_t p;
	memset(&p, 0, sizeof p);
	void *r = ucp_tag_recv_nbx(u->w, buf, len, (uint64_t)peer | MG_PAY, ~0ULL, &p);
	if (r == NULL) return 0;
	if (UCS_PTR_IS_ERR(r)) return UCS_PTR_STATUS(r);
	*req = r;
	return 1;
}

// mg_recv_data posts the receive of the data of pulled region read id, len
// bytes, into buf (pinned by the caller): 0 done, 1 pending (u->preq), or
// a negative ucs_status_t.
static int mg_recv_data(uintptr_t up, uint64_t id, uintptr_t buf, size_t len) {
	mg_ucx *u = (mg_ucx *)up;
	ucp_request_param_t p;
	memset(&p, 0, sizeof p);
	p.op_attr_mask = UCP_OP_ATTR_FLAG_NO_IMM_CMPL | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.recv = mg_data_cb;
	p.user_data = u;
	void *r = ucp_tag_recv_nbx(u->w, (void *)buf, len, MG_DATA | id, ~0ULL, &p);
	if (UCS_PTR_IS_ERR(r)) return UCS_PTR_STATUS(r);
	u->preq = r;
	return 1;
}

// mg_test_recv returns the status of the receive req (UCS_INPROGRESS while
// it runs), with the bytes received in u->plen, and frees it once done.
static int mg_test_recv(uintptr_t up, void *req) {
	mg_ucx *u = (mg_ucx *)up;
	ucp_tag_recv_info_t info;
	memset(&info, 0, sizeof info);
	ucs_status_t st = ucp_tag_recv_request_test(req, &info);
	if (st == UCS_INPROGRESS) return st;
	u->plen = info.length;
	ucp_request_free(req);
	return st;
}

// mg_send_raw sends len bytes at buf (pinned by the caller, or C memory)
// to peer with tag: 0 done, 1 pending (u->sreq), or a negative
// ucs_status_t.
static int mg_send_raw(uintptr_t up, int peer, uint64_t tag, uintptr_t buf, size_t len) {
	mg_ucx *u = (mg_ucx *)up;
	if (!u->eps[peer]) return UCS_ERR_NOT_CONNECTED; // no endpoint made yet: never a crash
	ucp_request_param_t p;
	memset(&p, 0, sizeof p);
	p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	p.cb.send = mg_raw_cb;
	p.user_data = u;
	void *r = ucp_tag_send_nbx(u->eps[peer], (void *)buf, len, tag, &p);
	if (r == NULL) return 0;
	if (UCS_PTR_IS_ERR(r)) return UCS_PTR_STATUS(r);
	u->sreq = r;
	return 1;
}

// mg_check returns the status of req (UCS_INPROGRESS while it runs) and
// frees it once it is done.
static int mg_check(void *req) {
	ucs_status_t st = ucp_request_check_status(req);
	if (st != UCS_INPROGRESS) ucp_request_free(req);
	return st;
}

static void mg_cancel(mg_ucx *u, void *req) { ucp_request_cancel(u->w, req); }

// mg_mem_map registers len bytes at addr for the peers' puts and gets
// (rma.go) and packs its remote key into a malloc'd buffer (*key, *keylen).
static int mg_mem_map(mg_ucx *u, uintptr_t addr, size_t len, uintptr_t *memh, void **key, size_t *keylen) {
	ucp_mem_map_params_t p;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
	p.address = (void *)addr;
	p.length = len;
	ucp_mem_h m;
	ucs_status_t st = ucp_mem_map(u->ctx, &p, &m);
	if (st != UCS_OK) return st;
	void *rb;
	size_t rl;
	st = ucp_rkey_pack(u->ctx, m, &rb, &rl);
	if (st != UCS_OK) { ucp_mem_unmap(u->ctx, m); return st; }
	*key = malloc(rl);
	if (!*key) { ucp_rkey_buffer_release(rb); ucp_mem_unmap(u->ctx, m); return UCS_ERR_NO_MEMORY; }
	memcpy(*key, rb, rl);
	*keylen = rl;
	ucp_rkey_buffer_release(rb);
	*memh = (uintptr_t)m;
	return UCS_OK;
}

// mg_ep_info describes the endpoint to peer (its lanes and what each
// carries) in a malloc'd string, or returns NULL.
static char *mg_ep_info(mg_ucx *u, int peer) {
	if (peer < 0 || peer >= u->n || !u->eps[peer]) return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) return NULL;
	ucp_ep_print_info(u->eps[peer], f);
	fclose(f);
	return buf;
}

static void mg_mem_unmap(mg_ucx *u, uintptr_t memh) { ucp_mem_unmap(u->ctx, (ucp_mem_h)memh); }

// mg_rkey unpacks a peer's remote key through the endpoint to it.
static int mg_rkey(mg_ucx *u, int peer, const void *key, uintptr_t *rkey) {
	if (peer < 0 || peer >= u->n || !u->eps[peer]) return UCS_ERR_NOT_CONNECTED;
	ucp_rkey_h k;
	ucs_status_t st = ucp_ep_rkey_unpack(u->eps[peer], key, &k);
	if (st == UCS_OK) *rkey = (uintptr_t)k;
	return st;
}

static void mg_rkey_free(uintptr_t rkey) { ucp_rkey_destroy((ucp_rkey_h)rkey); }

// mg_rma puts (get 0) len bytes at buf into the peer's memory at raddr, or
// gets them from there into buf: 0 done, 1 under way (u->sreq), or a
// negative ucs_status_t. op 2 flushes the endpoint to peer instead: every
// put before it complete in the peer's memory.
static int mg_rma(uintptr_t up, int peer, int op, uintptr_t buf, size_t len, uint64_t raddr, uintptr_t rkey) {
	mg_ucx *u = (mg_ucx *)up;
	if (peer < 0 || peer >= u->n || !u->eps[peer]) return UCS_ERR_NOT_CONNECTED;
	ucp_request_param_t p;
	memset(&p, 0, sizeof p);
	void *r;
	switch (op) {
	case 0: r = ucp_put_nbx(u->eps[peer], (void *)buf, len, raddr, (ucp_rkey_h)rkey, &p); break;
	case 1: r = ucp_get_nbx(u->eps[peer], (void *)buf, len, raddr, (ucp_rkey_h)rkey, &p); break;
	default: r = ucp_ep_flush_nbx(u->eps[peer], &p);
	}
	if (r == NULL) return 0;
	if (UCS_PTR_IS_ERR(r)) return UCS_PTR_STATUS(r);
	u->sreq = r;
	return 1;
}

// mg_amo starts an atomic operation (op: add, and, or, xor, swap,
// compare-and-swap, in transport.AtomicOp's order) on the size-byte
// integer at raddr of peer's memory, its operand at val, the integer's
// value before written at res (for a compare-and-swap val holds the value
// compared and res the new value on entry): 0 done, 1 under way (u->sreq), or a negative
// ucs_status_t. Every one fetches, so that its completion means it is
// applied in the peer's memory.
static int mg_amo(uintptr_t up, int peer, int op, size_t size, uintptr_t val, uintptr_t res, uint64_t raddr, uintptr_t rkey) {
	mg_ucx *u = (mg_ucx *)up;
	if (peer < 0 || peer >= u->n || !u->eps[peer]) return UCS_ERR_NOT_CONNECTED;
	static const ucp_atomic_op_t ops[] = {UCP_ATOMIC_OP_ADD, UCP_ATOMIC_OP_AND, UCP_ATOMIC_OP_OR, UCP_ATOMIC_OP_XOR, UCP_ATOMIC_OP_SWAP, UCP_ATOMIC_OP_CSWAP};
	if (op < 0 || op > 5 || (size != 4 && size != 8)) return UCS_ERR_INVALID_PARAM;
	ucp_request_param_t p;
	memset(&p, 0, sizeof p);
	p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE | UCP_OP_ATTR_FIELD_REPLY_BUFFER;
	p.datatype = ucp_dt_make_contig(size);
	p.reply_buffer = (void *)res;
	void *r = ucp_atomic_op_nbx(u->eps[peer], ops[op], (void *)val, 1, raddr, (ucp_rkey_h)rkey, &p);
	if (r == NULL) return 0;
	if (UCS_PTR_IS_ERR(r)) return UCS_PTR_STATUS(r);
	u->sreq = r;
	return 1;
}

// mg_amo_n starts n atomic operations as mg_amo does, integer i at
// raddrs[i] with its operand and result at buf + 16*i and + 16*i + 8,
// releasing each request at once, and then a flush of the endpoint,
// whose completion means every one is applied and its result written: 0
// done, 1 under way (u->sreq, the flush), or a negative ucs_status_t
// (*posted operations started before it).
static int mg_amo_n(uintptr_t up, int peer, int op, size_t size, int n, uintptr_t buf, const uint64_t *raddrs, uintptr_t rkey, int *posted) {
	mg_ucx *u = (mg_ucx *)up;
	*posted = 0;
	for (int i = 0; i < n; i++) {
		int st = mg_amo(up, peer, op, size, buf + 16 * (uintptr_t)i, buf + 16 * (uintptr_t)i + 8, raddrs[i], rkey);
		if (st < 0) return st;
		if (st == 1) ucp_request_free(u->sreq);
		(*posted)++;
	}
	return mg_rma(up, peer, 2, 0, 0, 0, 0);
}

static unsigned mg_progress(mg_ucx *u) { return ucp_worker_progress(u->w); }

static int mg_arm(mg_ucx *u) { return ucp_worker_arm(u->w); }

static void mg_wake(mg_ucx *u) {
	char c = 1;
	if (write(u->wake[1], &c, 1) < 0) {}
}

// mg_sleep waits until the worker's event descriptor or the wake pipe is
// readable, or ms milliseconds pass.
static void mg_sleep(mg_ucx *u, int ms) {
	struct pollfd p[2] = {{u->efd, POLLIN, 0}, {u->wake[0], POLLIN, 0}};
	poll(p, 2, ms);
	char b[64];
	while (read(u->wake[0], b, sizeof b) > 0) {}
}

// mg_close closes every endpoint (forcibly: a peer may be gone) and frees
// the worker and context.
static void mg_close(mg_ucx *u) {
	ucp_request_param_t p;
	memset(&p, 0, sizeof p);
	p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	p.flags = UCP_EP_CLOSE_FLAG_FORCE;
	for (int i = 0; i < u->n; i++) {
		if (!u->eps[i]) continue;
		void *r = ucp_ep_close_nbx(u->eps[i], &p);
		if (r != NULL && !UCS_PTR_IS_ERR(r)) {
			for (int k = 0; k < 1000000 && ucp_request_check_status(r) == UCS_INPROGRESS; k++) ucp_worker_progress(u->w);
			ucp_request_free(r);
		}
		u->eps[i] = NULL;
	}
	mg_free_u(u);
}

static const char *mg_version(void) { return ucp_get_version_string(); }

// mg_info writes the resources of a context made with the environment's
// settings into a malloc'd string.
// mg_ctx_info describes u's context (its transports and devices) in a
// malloc'd string, or returns NULL.
static char *mg_ctx_info(mg_ucx *u) {
	char *buf = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);
	if (!f) return NULL;
	ucp_context_print_info(u->ctx, f);
	fclose(f);
	return buf;
}

static char *mg_info(int *status) {
	ucp_config_t *cfg;
	ucs_status_t st = ucp_config_read(NULL, NULL, &cfg);
	if (st != UCS_OK) { *status = st; return NULL; }
	ucp_params_t p;
	memset(&p, 0, sizeof p);
	p.field_mask = UCP_PARAM_FIELD_FEATURES;
	p.features = UCP_FEATURE_TAG;
	ucp_context_h ctx;
	st = ucp_init(&p, cfg, &ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK) { *status = st; return NULL; }
	char *buf = NULL; size_t sz = 0;
	FILE *f = open_memstream(&buf, &sz);
	if (f) { ucp_context_print_info(ctx, f); fclose(f); }
	ucp_cleanup(ctx);
	*status = UCS_OK;
	return buf;
}
*/
import "C"

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/mpigo/mpi/internal/transport"
	"github.com/mpigo/mpi/internal/transport/fabric"
	"github.com/mpigo/mpi/internal/wire"
)

// Built reports whether this build has the UCX transport.
const Built = true

// copyLimit is the largest payload a send copies into C memory (and so
// completes at once in the common case); larger payloads are pinned and
// sent in place.
const copyLimit = 8 << 10

func status(st C.int) error {
	return errors.New(C.GoString(C.ucs_status_string(C.ucs_status_t(st))))
}

// Available describes the UCX library this build is linked with and the
// devices and transports it opens with the environment's settings (UCX_TLS,
// UCX_NET_DEVICES), or says why it cannot.
func Available() (string, error) {
	var st C.int
	s := C.mg_info(&st)
	if s == nil {
		return "", fmt.Errorf("ucx %s: cannot open a context: %w", C.GoString(C.mg_version()), status(st))
	}
	text := C.GoString(s)
	C.free(unsafe.Pointer(s))
	var res []string
	for _, line := range strings.Split(text, "\n") {
		// "#   resource 0  :  md 0  dev 0  flags -- tcp/lo"
		if strings.Contains(line, "resource") && strings.Contains(line, "flags") {
			if f := strings.Fields(line); len(f) > 0 && !slices.Contains(res, f[len(f)-1]) {
				res = append(res, f[len(f)-1])
			}
		}
	}
	return fmt.Sprintf("ucx %s: %s", C.GoString(C.mg_version()), strings.Join(res, " ")), nil
}

type cbuf struct {
	p   unsafe.Pointer
	cap int
}

// A sendReq is a send under way: its header's (or whole message's)
// request and its payload's, each nil once done.
type sendReq struct {
	req, req2 unsafe.Pointer
	sb        *C.mg_sbuf
	peer      int
	err       error // the first error of either
	done      chan error
	what      string // "sending to" (""), or a one-sided operation's "writing into", ...
	// lost: abandoned under way, its peer lost (lose.go); ended: UCX
	// ended it after that; pin: the memory it uses, to unpin when it
	// ends. Under wmu.
	lost, ended bool
	pin         *pinHold
}

// A gatherBuf is the frames gathered for one peer: n bytes from sb's
// header on, count frames; sb is kept when a send of it completes at once.
type gatherBuf struct {
	sb       *C.mg_sbuf
	n, count int
}

// A recvReq is a frame being received: its header's (or whole
// message's) request, then, for a payload sent apart, the payload's.
type recvReq struct {
	req  unsafe.Pointer // nil once done
	req2 unsafe.Pointer // the payload's; nil once done
	// posted: the payload's receive is posted, or the frame has none
	// apart (resolve).
	posted bool
	buf    cbuf
	n      int
	err    error
	peer   int
	// gathered: the message is frames gathered by the peer (fabric.Gather).
	gathered bool
}

// Transport is one rank's UCX endpoint. It is safe for concurrent use.
type Transport struct {
	cfg  Config
	u    *C.mg_ucx
	addr []byte

	// wmu serialises every call on the worker (UCS_THREAD_MODE_SERIALIZED).
	wmu    sync.Mutex
	closed bool
	// exposed and remotes: the registrations and unpacked keys of
	// one-sided access (rma.go), released at Close if still there.
	exposed map[*exposure]bool
	remotes map[*remote]bool
	direct  []int8 // per peer: DirectMemory's answer (1, -1), 0 until asked
	reach   int8   // what the context's transports say of every peer's memory (memkey.go: reachNone, ...)
	eps     fabric.Endpoints
	sends   []*sendReq
	inq     *fabric.Queues[*recvReq] // per peer, in the order probed
	free    []cbuf
	failed  []error // per peer, once reported
	// lost says, per peer, why the job lost it (LosePeer; nil until
	// then); abandoned are the requests under way to lost peers that UCX
	// may still use (lose.go).
	lost      []error
	abandoned []*sendReq
	nfailed   int // failures seen of u.nfailed
	needEP    []int
	// unposted counts, per peer, the frames queued whose payload's
	// receive is not posted yet (resolve).
	unposted []int
	// freeReqs are recvReqs to reuse (under wmu); ready, receivedFn and
	// takeFn are step's list of frames to deliver and its callbacks,
	// made once (under dmu): a poll that finds nothing allocates
	// nothing (TestIdlePollAllocs), where a closure and a method value
	// per poll fed the garbage collector (6.7% of an 8-byte ping-pong's
	// time went to clearing the pages it then faulted in).
	freeReqs []*recvReq
	// spare is the buffer the next small message is received into
	// (mg_poll), scratch the C memory the next small send is copied
	// into; each is taken by a receive or a send left pending, and made
	// again when needed (under wmu).
	spare      cbuf
	scratch    *C.mg_sbuf
	up         C.uintptr_t // u as a number, for the calls that take it so
	ready      []*recvReq
	receivedFn func(*recvReq) bool
	takeFn     func(int, *recvReq)
	loop       *fabric.Loop
	// moved counts the pieces of pulls that ended (Moved).
	moved atomic.Uint64
	// The single copy's (region.go), under wmu: the regions exported by
	// token, the pulls under way from peers' regions, and the pull
	// requests and regions' bytes being sent.
	regions   map[uint64]*region
	nextTok   uint64
	nExported atomic.Int64
	reads     []*regionRead
	readsOver []*regionRead
	nextRead  uint64
	raw       []rawSend
	// rdoneSeen and sdoneSeen: u.rdone and u.sdone when checkReads and
	// checkRaw last tested their requests.
	rdoneSeen, sdoneSeen uint64
	// laterPulls are pull requests from peers with no endpoint yet.
	laterPulls []laterPull
	noDetect   atomic.Int32
	// Gathering (fabric.Gather; nil with Config.NoGather), under wmu:
	// the policy, per peer the frames gathered and not sent yet, and the
	// peers whose gathered frames could not be sent (reported by the
	// next step).
	gp          *fabric.Gather
	gath        []gatherBuf
	gatherFails []fabric.Failure
	// gatheredIn counts the messages of gathered frames received.
	gatheredIn atomic.Uint64

	// dmu is held by the goroutine that delivers, so that frames of a
	// peer reach the handler in order.
	dmu  sync.Mutex
	stop chan struct{}
	wg   sync.WaitGroup
}

// New makes a rank's context and worker and starts its progress goroutine.
func New(cfg Config) (*Transport, error) {
	var u *C.mg_ucx
	var what *C.char
	if st := C.mg_init(&u, C.int(cfg.Size), &what); st != 0 {
		return nil, fmt.Errorf("ucx: %s: %w (check UCX_TLS and UCX_NET_DEVICES; ucx_info -d lists the devices)", C.GoString(what), status(st))
	}
	t := &Transport{cfg: cfg, u: u, inq: fabric.NewQueues[*recvReq](cfg.Size),
		failed: make([]error, cfg.Size), unposted: make([]int, cfg.Size), stop: make(chan struct{})}
	t.up = C.uintptr_t(uintptr(unsafe.Pointer(u)))
	t.regions = map[uint64]*region{}
	if !cfg.NoGather {
		t.gp, t.gath = fabric.NewGather(cfg.Size), make([]gatherBuf, cfg.Size)
	}
	t.receivedFn = t.received
	t.takeFn = func(peer int, r *recvReq) {
		t.ready = append(t.ready, r)
		if t.gp != nil {
			t.gp.Heard(peer) // under wmu (step)
		}
	}
	t.addr = C.GoBytes(unsafe.Pointer(u.addr), C.int(u.addrlen))
	t.reach = memoryReach(resourceTransports(t.ctxInfo()))
	t.loop = fabric.NewLoop(fabric.SpinFor(cfg.Spin), func() { C.mg_wake(t.u) })
	t.eps = fabric.Endpoints{Name: "ucx", What: "worker address", Addrs: cfg.Addrs, Closed: t.isClosed, Make: t.makeEP}
	t.eps.Init(cfg.Size)
	t.wg.Add(1)
	go t.run()
	return t, nil
}

// Address returns the worker's address, which peers need to reach it.
func (t *Transport) Address() []byte { return t.addr }

// Name returns "ucx".
func (t *Transport) Name() string { return "ucx" }

// ChunkSize implements transport.Chunker.
func (t *Transport) ChunkSize() int { return ChunkSize }

// Ready does nothing: the transport delivers from New on.
func (t *Transport) Ready() {}

// isClosed reports whether Close has begun.
func (t *Transport) isClosed() bool {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	return t.closed
}

// makeEP makes the endpoint to peer from its worker address
// (fabric.Endpoints.Make).
func (t *Transport) makeEP(peer int, addr []byte) error {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if t.closed {
		return errors.New("ucx: transport closed")
	}
	// A context of shared-memory transports alone has no failure
	// detection with UCX 1.13, which prints an error for each endpoint
	// asked for it before making it without: made without at once. A
	// lost peer is learnt from the job then (LosePeer).
	var nodetect C.int
	if t.reach == reachAll {
		nodetect = 1
	}
	if st := C.mg_ep(t.u, C.int(peer), unsafe.Pointer(&addr[0]), &nodetect); st != 0 {
		return fmt.Errorf("ucx: rank %d cannot make an endpoint to rank %d: %w", t.cfg.Rank, peer, status(st))
	}
	if nodetect != 0 {
		t.noDetect.Add(1)
	}
	return nil
}

// NoFailureDetection counts the endpoints made without UCX's detection of
// a failed peer (the transports that reach them have none): a peer's
// death is then learnt from the launcher, not from the transport.
func (t *Transport) NoFailureDetection() int { return int(t.noDetect.Load()) }

// peerErr returns why peer failed, or nil; t.wmu is held.
func (t *Transport) peerErr(peer int) error {
	// Read in Go: failed is C memory, written by the endpoints' error
	// callback during a progress, under wmu as this read.
	if st := unsafe.Slice(t.u.failed, t.cfg.Size)[peer]; st != 0 {
		return transport.PeerLost(fmt.Errorf("ucx: rank %d lost rank %d: %w", t.cfg.Rank, peer, status(C.int(st))))
	}
	if t.lost != nil {
		return t.lost[peer]
	}
	return nil
}

// Send sends f and returns when its payload may be reused.
func (t *Transport) Send(f wire.Frame) error {
	peer := f.To
	if err := fabric.CheckFrame("ucx", f, t.cfg.Size); err != nil {
		return err
	}
	if err := t.eps.Ensure(peer); err != nil {
		return err
	}
	n := len(f.Payload)
	if n <= copyLimit {
		return t.sendCopied(f, peer, n)
	}
	// The header goes in C memory that lives until the send completes; the
	// payload is sent in place, pinned (its address goes to C as a number:
	// it may sit in an object with pointers, which cgo's check would
	// refuse, though UCX reads only the bytes).
	sb := C.mg_sbuf_alloc(0)
	if sb == nil {
		return fmt.Errorf("ucx: sending to rank %d: out of memory", peer)
	}
	f.Header.Marshal(unsafe.Slice((*byte)(unsafe.Pointer(&sb.hdr[0])), wire.HeaderSize), n)
	h := new(pinHold)
	h.pin.Pin(&f.Payload[0])
	pay := uintptr(unsafe.Pointer(&f.Payload[0]))
	t.wmu.Lock()
	if t.closed {
		t.wmu.Unlock()
		h.pin.Unpin()
		C.free(unsafe.Pointer(sb))
		return errors.New("ucx: transport closed")
	}
	if err := t.peerErr(peer); err != nil {
		t.wmu.Unlock()
		h.pin.Unpin()
		C.free(unsafe.Pointer(sb))
		return err
	}
	t.flushPeer(peer)
	st := C.mg_send(t.up, C.int(peer), C.uint64_t(t.cfg.Rank), C.uintptr_t(uintptr(unsafe.Pointer(sb))), C.uintptr_t(pay), C.size_t(n), 0, 0)
	return t.sent(st, sb, peer, h)
}

// sendCopied sends f, whose payload of n bytes is at most copyLimit,
// copied with its header into the transport's scratch buffer: no
// allocation and one call into C when UCX completes the send at once, as
// it usually does for short messages; a send left pending keeps the
// buffer until it completes, and the next one is allocated.
func (t *Transport) sendCopied(f wire.Frame, peer, n int) error {
	t.wmu.Lock()
	if t.closed {
		t.wmu.Unlock()
		return errors.New("ucx: transport closed")
	}
	if err := t.peerErr(peer); err != nil {
		t.wmu.Unlock()
		return err
	}
	if f.Kind == wire.RTS && f.Flags&wire.FlagToken != 0 {
		t.noteRTS(&f)
	}
	if t.gp != nil {
		if fabric.Small(wire.HeaderSize+n) && t.gp.Take(peer) {
			first, err := t.gather(f, peer, n)
			t.wmu.Unlock()
			if first {
				// The progress goroutine sends them at its next step,
				// which must come soon even if the program makes no MPI
				// call for a while: from a nap too (a wait's mark may
				// outlive the wait, and a nap's timer on an idle
				// processor fires a millisecond or more late).
				t.loop.Kick()
			} else {
				t.loop.Nudge()
			}
			return err
		}
		t.flushPeer(peer)
	}
	if t.scratch == nil {
		if t.scratch = C.mg_sbuf_alloc(C.size_t(copyLimit)); t.scratch == nil {
			t.wmu.Unlock()
			return fmt.Errorf("ucx: sending to rank %d: out of memory", peer)
		}
	}
	sb := t.scratch
	f.Header.Marshal(unsafe.Slice((*byte)(unsafe.Pointer(&sb.hdr[0])), wire.HeaderSize), n)
	copy(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(sb), C.sizeof_mg_sbuf)), n), f.Payload)
	st := C.mg_send(t.up, C.int(peer), C.uint64_t(t.cfg.Rank), C.uintptr_t(uintptr(unsafe.Pointer(sb))), 0, C.size_t(n), 1, 1)
	if st == 1 {
		t.scratch = nil // the pending send's now
	}
	return t.sent(st, sb, peer, nil)
}

// sent ends a Send after mg_send returned st: at once if it completed or
// failed, else after waiting for it; then it unpins the payload, if h
// pinned it (settle). t.wmu is held, and released.
func (t *Transport) sent(st C.int, sb *C.mg_sbuf, peer int, h *pinHold) error {
	req, req2, st2 := t.u.sreq, t.u.sreq2, t.u.sst2
	if st <= 0 {
		t.wmu.Unlock()
		if h != nil {
			h.pin.Unpin()
		}
		t.loop.Nudge()
		if st < 0 {
			return fmt.Errorf("ucx: sending to rank %d: %w", peer, status(st))
		}
		return nil
	}
	s := &sendReq{req: req, req2: req2, sb: sb, peer: peer, done: make(chan error, 1)}
	if st2 != 0 {
		s.err = fmt.Errorf("ucx: sending to rank %d: %w", peer, status(st2))
	}
	t.sends = append(t.sends, s)
	t.wmu.Unlock()
	err := t.awaitSend(s) // it polls the worker itself: no nudge
	if h != nil {
		t.settle(h, s)
	}
	return err
}

// postData posts the receive of the data of pull id into dst, which the
// caller keeps pinned (region.go); t.wmu is held.
func (t *Transport) postData(id uint64, dst []byte) (unsafe.Pointer, error) {
	if st := C.mg_recv_data(t.up, C.uint64_t(id), C.uintptr_t(uintptr(unsafe.Pointer(&dst[0]))), C.size_t(len(dst))); st < 0 {
		return nil, status(st)
	}
	return t.u.preq, nil
}

// testRecv reports whether the receive req is over, with the bytes it
// received and its error, freeing it if it is; t.wmu is held.
func (t *Transport) testRecv(req unsafe.Pointer) (bool, int, error) {
	st := C.mg_test_recv(t.up, req)
	if st == C.UCS_INPROGRESS {
		return false, 0, nil
	}
	if st != 0 {
		return true, int(t.u.plen), status(st)
	}
	return true, int(t.u.plen), nil
}

// sendRaw sends n bytes at p (pinned by the caller, or C memory) to peer
// with tag, and returns its request if it is under way; t.wmu is held.
func (t *Transport) sendRaw(peer int, tag uint64, p uintptr, n int) (unsafe.Pointer, error) {
	switch st := C.mg_send_raw(t.up, C.int(peer), C.uint64_t(tag), C.uintptr_t(p), C.size_t(n)); {
	case st < 0:
		return nil, status(st)
	case st == 1:
		return t.u.sreq, nil
	}
	return nil, nil
}

// reqDone reports whether the request req is over, freeing it if it is;
// t.wmu is held.
func (t *Transport) reqDone(req unsafe.Pointer) (bool, error) {
	st := C.mg_check(req)
	if st == C.UCS_INPROGRESS {
		return false, nil
	}
	if st != 0 {
		return true, status(st)
	}
	return true, nil
}

// memMap registers n bytes at p (pinned by the caller) for the peers'
// puts and gets, and returns the registration and its packed remote key;
// t.wmu is held.
func (t *Transport) memMap(p uintptr, n int) (uintptr, []byte, error) {
	var memh C.uintptr_t
	var key unsafe.Pointer
	var keylen C.size_t
	if st := C.mg_mem_map(t.u, C.uintptr_t(p), C.size_t(n), &memh, &key, &keylen); st != 0 {
		return 0, nil, status(st)
	}
	b := C.GoBytes(key, C.int(keylen))
	C.free(key)
	return uintptr(memh), b, nil
}

// epInfo describes the endpoint to peer (ucp_ep_print_info); t.wmu is
// held.
func (t *Transport) epInfo(peer int) string {
	s := C.mg_ep_info(t.u, C.int(peer))
	if s == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(s))
	return C.GoString(s)
}

// ctxInfo describes the transport's UCX context (ucp_context_print_info).
func (t *Transport) ctxInfo() string {
	s := C.mg_ctx_info(t.u)
	if s == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(s))
	return C.GoString(s)
}

// memUnmap ends a registration of memMap's; t.wmu is held.
func (t *Transport) memUnmap(memh uintptr) { C.mg_mem_unmap(t.u, C.uintptr_t(memh)) }

// unpackKey makes peer's packed remote key usable through the endpoint to
// peer; t.wmu is held.
func (t *Transport) unpackKey(peer int, key []byte) (uintptr, error) {
	var rkey C.uintptr_t
	if st := C.mg_rkey(t.u, C.int(peer), unsafe.Pointer(&key[0]), &rkey); st != 0 {
		return 0, status(st)
	}
	return uintptr(rkey), nil
}

// freeKey destroys a key of unpackKey's; t.wmu is held.
func (t *Transport) freeKey(rkey uintptr) { C.mg_rkey_free(C.uintptr_t(rkey)) }

// rma starts a put (op 0) of n bytes at p (pinned by the caller) to
// raddr of peer's memory, a get (op 1) from there into p, or a flush of
// the endpoint to peer (op 2), and returns its request if it is under
// way; t.wmu is held.
func (t *Transport) rma(peer, op int, p uintptr, n int, raddr uint64, rkey uintptr) (unsafe.Pointer, error) {
	switch st := C.mg_rma(t.up, C.int(peer), C.int(op), C.uintptr_t(p), C.size_t(n), C.uint64_t(raddr), C.uintptr_t(rkey)); {
	case st < 0:
		return nil, status(st)
	case st == 1:
		return t.u.sreq, nil
	}
	return nil, nil
}

// amo starts an atomic operation (transport.AtomicOp op) on the
// size-byte integer at raddr of peer's memory, its operand at val and its
// result at res (both pinned by the caller), and returns its request if it
// is under way; t.wmu is held.
func (t *Transport) amo(peer int, op transport.AtomicOp, size int, val, res uintptr, raddr uint64, rkey uintptr) (unsafe.Pointer, error) {
	switch st := C.mg_amo(t.up, C.int(peer), C.int(op), C.size_t(size), C.uintptr_t(val), C.uintptr_t(res), C.uint64_t(raddr), C.uintptr_t(rkey)); {
	case st < 0:
		return nil, status(st)
	case st == 1:
		return t.u.sreq, nil
	}
	return nil, nil
}

// amoN starts atomic operations (op) on the size-byte integers at raddrs
// of peer's memory, integer i's operand at buf+16*i and its result at
// buf+16*i+8 (pinned by the caller), and then a flush of the endpoint,
// and returns the flush's request if it is under way: when it ends,
// every one is applied and its result written. t.wmu is held.
func (t *Transport) amoN(peer int, op transport.AtomicOp, size int, buf uintptr, raddrs []uint64, rkey uintptr) (unsafe.Pointer, error) {
	var posted C.int
	switch st := C.mg_amo_n(t.up, C.int(peer), C.int(op), C.size_t(size), C.int(len(raddrs)), C.uintptr_t(buf), (*C.uint64_t)(unsafe.Pointer(&raddrs[0])), C.uintptr_t(rkey), &posted); {
	case st < 0:
		if posted > 0 {
			// Some are under way: wait for them before the buffer goes.
			if req, err := t.rma(peer, 2, 0, 0, 0, 0); err == nil && req != nil {
				return req, status(st)
			}
		}
		return nil, status(st)
	case st == 1:
		return t.u.sreq, nil
	}
	return nil, nil
}

// cancelReq cancels req; UCX then ends it in error. t.wmu is held.
func (t *Transport) cancelReq(req unsafe.Pointer) { C.mg_cancel(t.u, req) }

// cmalloc and cfree allocate and free C memory.
func (t *Transport) cmalloc(n int) unsafe.Pointer { return C.malloc(C.size_t(n)) }
func (t *Transport) cfree(p unsafe.Pointer)       { C.free(p) }

// await waits for done, told by whoever progresses the worker, and
// progresses it itself when nobody else does (as a send's wait).
func (t *Transport) await(done chan error) error {
	return fabric.Await(done, &t.dmu, func(stuck bool) {
		if stuck {
			t.progressSends()
		} else if t.dmu.TryLock() {
			t.step(true)
			t.dmu.Unlock()
		}
	})
}

// keepMax is the largest receive buffer kept for later receives (8 of
// them at most): 64 MiB at most stay with the transport between frames.
const keepMax = 8 << 20

// newRecvReq returns a cleared recvReq; t.wmu is held.
func (t *Transport) newRecvReq() *recvReq {
	if n := len(t.freeReqs); n > 0 {
		r := t.freeReqs[n-1]
		t.freeReqs = t.freeReqs[:n-1]
		return r
	}
	return new(recvReq)
}

// putRecvReq keeps r, delivered, for later receives; t.wmu is held.
func (t *Transport) putRecvReq(r *recvReq) {
	if len(t.freeReqs) < 64 {
		*r = recvReq{}
		t.freeReqs = append(t.freeReqs, r)
	}
}

func (t *Transport) getBuf(n int) cbuf {
	// The smallest kept buffer that holds n bytes: a frame header must
	// not take the buffer of 4 MiB that the next payload needs, which
	// would then be fresh memory, every page of it faulted in.
	best := -1
	for i, b := range t.free {
		if b.cap >= n && (best < 0 || b.cap < t.free[best].cap) {
			best = i
		}
	}
	if best >= 0 {
		b := t.free[best]
		t.free = slices.Delete(t.free, best, best+1)
		return b
	}
	return newBuf(max(n, 64<<10))
}

// newBuf allocates a receive buffer of c bytes in C memory.
func newBuf(c int) cbuf { return cbuf{C.malloc(C.size_t(c)), c} }

// dropKept frees the buffers kept for later receives.
func (t *Transport) dropKept() {
	for _, b := range t.free {
		C.free(b.p)
	}
	t.free = nil
}

// putBuf keeps b for later receives; t.wmu is held.
func (t *Transport) putBuf(b cbuf) {
	if b.cap > keepMax {
		C.free(b.p)
		return
	}
	if len(t.free) < 8 {
		t.free = append(t.free, b)
		return
	}
	// Full: keep the larger buffers, which cost the most to make anew.
	small := 0
	for i, f := range t.free {
		if f.cap < t.free[small].cap {
			small = i
		}
	}
	if t.free[small].cap < b.cap {
		b, t.free[small] = t.free[small], b
	}
	C.free(b.p)
}

// step progresses the worker once, starts the receives of what arrived,
// and delivers the frames that are complete; wait says that a wait of
// the program steps (its poll), not the progress goroutine. The caller
// holds t.dmu.
func (t *Transport) step(wait bool) bool {
	t.ready = t.ready[:0]
	var fails []fabric.Failure
	t.wmu.Lock()
	if t.closed {
		t.wmu.Unlock()
		return false
	}
	t.flushGathered()
	if wait && t.gp != nil {
		t.gp.Waited()
	}
	got := false
	progress := C.int(1)
	for {
		if t.spare.p == nil {
			t.spare = t.getBuf(maxWhole)
		}
		k := C.mg_poll(t.up, progress, C.uintptr_t(uintptr(t.spare.p)), C.size_t(t.spare.cap))
		if progress != 0 {
			got, progress = t.u.made > 0, 0
		}
		if k == 0 {
			break
		}
		tag, n := t.u.ptag, t.u.plen
		got = true
		peer := int(tag)
		r := t.newRecvReq()
		r.peer, r.n = peer, int(n)
		if k == 1 {
			// Received into the spare buffer.
			r.buf, t.spare = t.spare, cbuf{}
			r.req = t.u.preq
			if t.u.pst != 0 {
				r.err = status(t.u.pst)
			}
			if r.n > maxWhole && r.err == nil {
				r.err = fmt.Errorf("a message of %d bytes, longer than any frame sent whole (%d)", r.n, maxWhole)
			}
		} else {
			if r.n > maxWhole {
				// No frame is sent whole at that length: receive it (it
				// was taken) into a buffer too short, which UCX refuses,
				// and drop it, rather than take the memory the peer names.
				r.err = fmt.Errorf("a message of %d bytes, longer than any frame sent whole (%d)", r.n, maxWhole)
				n = wire.HeaderSize
			}
			r.buf = t.getBuf(max(int(n), 1))
			switch st := C.mg_recv(t.u, t.u.pmsg, r.buf.p, n); {
			case st == 1:
				r.req = t.u.preq
			case st < 0 && r.err == nil:
				r.err = status(st)
			}
		}
		if uint64(tag)&ctlBit != 0 && r.req == nil {
			// A pull request of region.go's, not a frame.
			if from := int(uint64(tag) &^ ctlBit); r.err == nil && from >= 0 && from < t.cfg.Size {
				b := unsafe.Slice((*byte)(r.buf.p), r.n)
				if t.eps.Has(from) {
					t.pulled(from, b)
				} else {
					// Served once the endpoint to the reader is made,
					// outside the lock.
					t.laterPulls = append(t.laterPulls, laterPull{from, [ctlSize]byte(b[:min(len(b), ctlSize):ctlSize])})
					if !slices.Contains(t.needEP, from) {
						t.needEP = append(t.needEP, from)
					}
				}
			}
			t.putBuf(r.buf)
			t.putRecvReq(r)
			continue
		}
		if uint64(tag)&gatherBit != 0 {
			r.gathered = true
			peer = int(uint64(tag) &^ gatherBit)
			r.peer = peer
		}
		if peer < 0 || peer >= t.cfg.Size {
			// Tags are ranks: a message with another is no frame of ours.
			// Receive it all the same (it was taken), then drop it.
			peer = 0
			r.peer = 0
			r.err = fmt.Errorf("a message tagged %d, which is no rank", int(tag))
		}
		// A payload sent apart is received in its peer's order: its
		// receive is posted now if every earlier frame of the peer has
		// posted its own, else when the frame comes first (received).
		if r.req == nil && t.unposted[peer] == 0 {
			t.resolve(r)
		} else {
			t.unposted[peer]++
		}
		t.inq.Push(peer, r)
		if !t.eps.Has(peer) && !slices.Contains(t.needEP, peer) {
			t.needEP = append(t.needEP, peer)
		}
	}
	if t.checkSends() {
		got = true
	}
	if len(t.raw) > 0 {
		t.checkRaw()
	}
	over := t.readsOver[:0]
	if len(t.reads) > 0 {
		over = t.checkReads(over)
		got = got || len(over) > 0
	}
	t.inq.Take(t.receivedFn, t.takeFn)
	ready := t.ready
	if len(t.gatherFails) > 0 {
		for _, fl := range t.gatherFails {
			if t.failed[fl.Peer] == nil {
				t.failed[fl.Peer] = fl.Err
				fails = append(fails, fl)
			}
		}
		t.gatherFails = t.gatherFails[:0]
	}
	if int(t.u.nfailed) != t.nfailed {
		t.nfailed = int(t.u.nfailed)
		for p := range t.failed {
			if t.failed[p] == nil {
				if err := t.peerErr(p); err != nil {
					t.failed[p] = err
					fails = append(fails, fabric.Failure{Peer: p, Err: err})
					t.dropGathered(p)
					// Its sends and receives end now: UCX completes them
					// with an error once cancelled.
					for _, s := range t.sends {
						if s.peer == p {
							s.cancel(t)
						}
					}
					for _, r := range t.inq.Peer(p) {
						r.cancel(t)
					}
					t.failRegions(p, err)
				}
			}
		}
	}
	need := t.needEP
	t.needEP = nil
	t.wmu.Unlock()
	for i, rr := range over {
		rr.done(rr.err)
		over[i] = nil
	}
	t.readsOver = over[:0]
	for _, r := range ready {
		t.deliver(r)
	}
	if len(ready) > 0 {
		t.wmu.Lock()
		for _, r := range ready {
			t.putBuf(r.buf)
			t.putRecvReq(r)
		}
		t.wmu.Unlock()
		clear(ready)
	}
	fabric.Report(fails, t.cfg.OnPeerError)
	for _, p := range need {
		// An endpoint of our own to a peer that sends to us tells us when
		// it fails.
		if err := t.eps.Ensure(p); err != nil && t.cfg.OnPeerError != nil {
			t.cfg.OnPeerError(p, err)
		}
	}
	if len(need) > 0 {
		t.wmu.Lock()
		for _, lp := range t.laterPulls {
			if t.eps.Has(lp.peer) && !t.closed {
				t.pulled(lp.peer, lp.req[:])
			}
		}
		t.laterPulls = t.laterPulls[:0]
		t.wmu.Unlock()
	}
	return got || len(ready) > 0
}

// maxWhole is the longest message a peer sends whole (a frame's header
// and a payload of at most copyLimit bytes); a longer payload comes apart
// from its header.
const maxWhole = wire.HeaderSize + copyLimit

// maxApart bounds the payload a header may announce: the engine's frames
// are at most a chunk (ChunkSize) and its header.
const maxApart = ChunkSize + wire.HeaderSize

// received reports whether the receive of r is over, ending its
// requests if it is; r is the first of its peer's queue. t.wmu is held.
func (t *Transport) received(r *recvReq) bool {
	if r.req != nil {
		st := C.mg_check(r.req)
		if st == C.UCS_INPROGRESS {
			return false
		}
		r.req = nil
		if st != 0 && r.err == nil {
			r.err = status(st)
		}
	}
	if !r.posted {
		t.unposted[r.peer]--
		t.resolve(r)
	}
	if r.req2 != nil {
		st := C.mg_check(r.req2)
		if st == C.UCS_INPROGRESS {
			return false
		}
		r.req2 = nil
		if st != 0 && r.err == nil {
			r.err = status(st)
		}
	}
	return true
}

// resolve looks at the header of r, received: if it announces a payload
// sent apart, it posts that payload's receive behind the header in r's
// buffer (a larger one if need be). t.wmu is held.
func (t *Transport) resolve(r *recvReq) {
	r.posted = true
	if r.err != nil || r.n != wire.HeaderSize || r.gathered {
		return
	}
	_, n, err := wire.Unmarshal(unsafe.Slice((*byte)(r.buf.p), wire.HeaderSize))
	if err != nil || n == 0 {
		return // deliver reports a bad header
	}
	if n < 0 || n > maxApart-wire.HeaderSize {
		r.err = fmt.Errorf("a frame header that announces %d bytes of payload, more than any frame carries", n)
		return
	}
	if t.failed[r.peer] != nil {
		r.err = t.failed[r.peer]
		return
	}
	if r.buf.cap < wire.HeaderSize+n {
		b := t.getBuf(wire.HeaderSize + n)
		C.memcpy(b.p, r.buf.p, wire.HeaderSize)
		t.putBuf(r.buf)
		r.buf = b
	}
	r.n = wire.HeaderSize + n
	switch st := C.mg_recv_pay(t.u, C.int(r.peer), unsafe.Add(r.buf.p, wire.HeaderSize), C.size_t(n)); {
	case st == 1:
		r.req2 = t.u.preq
	case st < 0:
		r.err = status(st)
	}
}

// cancel cancels r's requests under way (the peer failed, or the
// transport closes); UCX then completes them with an error.
func (r *recvReq) cancel(t *Transport) {
	if r.req != nil {
		C.mg_cancel(t.u, r.req)
	}
	if r.req2 != nil {
		C.mg_cancel(t.u, r.req2)
	}
}

// cancel cancels s's requests under way.
func (s *sendReq) cancel(t *Transport) {
	if s.req != nil {
		C.mg_cancel(t.u, s.req)
	}
	if s.req2 != nil {
		C.mg_cancel(t.u, s.req2)
	}
}

// over reports whether both of s's requests are done, ending each that
// is, and keeping the first error of either.
func (s *sendReq) over() bool {
	for _, q := range []*unsafe.Pointer{&s.req, &s.req2} {
		if *q == nil {
			continue
		}
		st := C.mg_check(*q)
		if st == C.UCS_INPROGRESS {
			continue
		}
		*q = nil
		if st != 0 && s.err == nil {
			s.err = fmt.Errorf("ucx: %s rank %d: %w", cmp.Or(s.what, "sending to"), s.peer, status(st))
		}
	}
	return s.req == nil && s.req2 == nil
}

// checkSends ends the sends UCX has completed and reports whether there
// were any; t.wmu is held.
func (t *Transport) checkSends() bool {
	done := false
	for i := 0; i < len(t.sends); i++ {
		s := t.sends[i]
		if s.over() {
			C.free(unsafe.Pointer(s.sb))
			err := s.err
			if err != nil {
				if pe := t.peerErr(s.peer); pe != nil {
					err = pe
				}
			}
			s.done <- err
			t.sends = slices.Delete(t.sends, i, i+1)
			i--
			done = true
		}
	}
	if len(t.abandoned) > 0 {
		t.checkAbandoned()
	}
	return done
}

// awaitSend waits for s to complete. A rendezvous needs both ends to
// progress the worker at each of its steps; the sender does so itself
// while it waits, for up to sendSpin: the whole step (delivering what
// arrived) when the progress goroutine is not in it, else the worker's
// progress and the sends' completions alone, for the progress goroutine
// may be in a handler that sends (the engine answers a message from
// there), waiting for this very send. Left to the progress goroutine, a
// 32 KiB message over UCX's tcp took 585 µs instead of 42: the wait
// ended on a timer of Go's, which sleeps at least a millisecond. After
// sendSpin, the progress goroutine ends it, but it may be stuck in a
// handler (the engine's reply queue is full, and the reply sender is
// this goroutine): then, every millisecond, the sender progresses the
// worker and checks the sends itself, without delivering.
func (t *Transport) awaitSend(s *sendReq) error {
	var t0 time.Time
	one := fabric.OneProc()
	for i := 0; ; i++ {
		select {
		case err := <-s.done:
			return err
		default:
		}
		if i%64 == 0 {
			if i == 0 {
				t0 = time.Now()
			} else if time.Since(t0) > sendSpin {
				break
			}
		}
		if t.dmu.TryLock() {
			// This wait polls the worker: keep the progress goroutine
			// napping meanwhile (as a receive's wait does, Poll), or it
			// wakes, steps and spins beside the waiter, a thread more
			// for the cores and a second poller of the worker (a C
			// program's MPI_Fetch_and_op loop over UCX's shared memory
			// took 10-12 µs a call instead of 5). Only once this wait
			// holds dmu: one that cannot take it may run on the
			// progress goroutine itself, sending from a handler.
			t.loop.MarkWait()
			t.step(true)
			t.dmu.Unlock()
		} else {
			t.progressSends()
			if one {
				// The progress goroutine holds dmu and may wait
				// for this processor (fabric.OneProc).
				runtime.Gosched()
			}
		}
	}
	// The progress goroutine ends it from now on: end its nap.
	t.loop.EndWait()
	return fabric.Await(s.done, &t.dmu, func(stuck bool) {
		if stuck {
			t.progressSends()
		}
	})
}

// sendSpin is how long a sender progresses the worker itself while its
// send is under way (awaitSend).
const sendSpin = 5 * time.Millisecond

// progressSends progresses the worker and ends the sends it completed,
// without delivering what arrived (the progress goroutine's work).
func (t *Transport) progressSends() {
	t.wmu.Lock()
	if !t.closed {
		t.flushGathered()
		if t.gp != nil {
			t.gp.Waited() // a wait's
		}
		C.mg_progress(t.u)
		t.checkSends()
	}
	t.wmu.Unlock()
}

func (t *Transport) deliver(r *recvReq) {
	if r.err == nil && r.n < wire.HeaderSize {
		r.err = fmt.Errorf("a message of %d bytes, shorter than a frame header", r.n)
	}
	var f wire.Frame
	if r.err == nil && r.gathered {
		b := unsafe.Slice((*byte)(r.buf.p), r.n)
		if r.err = fabric.SplitGathered(b, func(h wire.Header, p []byte) {
			t.handle(wire.Frame{Header: h, From: r.peer, To: t.cfg.Rank, Payload: p})
		}); r.err == nil {
			t.gatheredIn.Add(1)
			return
		}
	} else if r.err == nil {
		b := unsafe.Slice((*byte)(r.buf.p), r.n)
		h, n, err := wire.Unmarshal(b)
		switch {
		case err != nil:
			r.err = err
		case n != r.n-wire.HeaderSize:
			r.err = fmt.Errorf("a frame header that says %d bytes of payload in a message of %d", n, r.n)
		default:
			f = wire.Frame{Header: h, From: r.peer, To: t.cfg.Rank, Payload: b[wire.HeaderSize:r.n:r.n]}
		}
	}
	if r.err != nil {
		t.wmu.Lock()
		reported := t.failed[r.peer] != nil
		if !reported {
			t.failed[r.peer] = r.err
		}
		t.wmu.Unlock()
		if !reported && t.cfg.OnPeerError != nil {
			t.cfg.OnPeerError(r.peer, fmt.Errorf("ucx: receiving from rank %d: %w", r.peer, r.err))
		}
		return
	}
	t.handle(f)
}

// handle gives the handler f, a frame received.
func (t *Transport) handle(f wire.Frame) {
	if t.nExported.Load() > 0 && f.Header.AnswersRTS() {
		// The reader is done with the region its RTS named (region.go).
		t.wmu.Lock()
		t.releaseAnswered(f.From, f.SendID, f.Context)
		t.wmu.Unlock()
	}
	t.cfg.Handler(f)
}

// pending says whether sends or receives are under way; t.wmu is held.
func (t *Transport) pending() bool { return len(t.sends) > 0 || t.inq.Busy() || t.regionsBusy() }

// run progresses the worker until Close (fabric.Loop): it spins after the
// last event, naps while a wait polls, then sleeps on the worker's event
// descriptor.
func (t *Transport) run() {
	defer t.wg.Done()
	t.loop.Run(t.stop, func() bool {
		// A goroutine that holds the lock is progressing the worker
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

// sleep arms the worker and sleeps on its event descriptor until it has
// work or the loop is woken.
func (t *Transport) sleep() {
	t.wmu.Lock()
	if !t.closed {
		t.flushGathered()
	}
	armed := !t.closed && C.mg_arm(t.u) == 0
	ms := 100
	if t.pending() {
		ms = 1
	}
	t.wmu.Unlock()
	if armed {
		C.mg_sleep(t.u, C.int(ms))
	}
}

// Moved implements transport.Mover: the pieces of single-copy pulls that
// ended, each at most pullPiece bytes.
func (t *Transport) Moved() uint64 { return t.moved.Load() }

// Poll implements transport.Polled: a waiting goroutine progresses the
// worker itself, so that a reply is seen without a wake-up.
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
// a wait polls the worker (fabric.Loop).
func (t *Transport) MarkWait() { t.loop.MarkWait() }

// EndWait implements transport.Polled: the waiter stops polling, so the
// progress goroutine must watch the worker. If it sleeps, it is woken to
// arm the worker again: an armed worker signals its descriptor once, and
// the waiter's polls may have taken that event, leaving the goroutine
// asleep through the next arrival (measured: 2.6 ms latency, the sleep's
// 1 ms time-outs, before this wake-up).
func (t *Transport) EndWait() { t.loop.EndWait() }

// Close cancels what is under way, closes every endpoint and frees the
// worker and the context. It is safe to call more than once.
func (t *Transport) Close() error {
	t.wmu.Lock()
	if t.closed || t.stop == nil {
		t.wmu.Unlock()
		return nil
	}
	close(t.stop)
	t.wmu.Unlock()
	C.mg_wake(t.u)
	t.wg.Wait()
	// The pulls that end are told last, with no lock held (a done
	// function may send, and finds the transport closed).
	var over []*regionRead
	defer func() {
		for _, rr := range over {
			rr.done(rr.err)
		}
	}()
	t.dmu.Lock()
	defer t.dmu.Unlock()
	t.wmu.Lock()
	defer t.wmu.Unlock()
	// Frames gathered and not sent yet go now, and have a moment to
	// leave before what is under way is cancelled.
	if t.flushGathered() {
		for end := time.Now().Add(100 * time.Millisecond); len(t.sends) > 0 && time.Now().Before(end); {
			C.mg_progress(t.u)
			t.checkSends()
		}
	}
	t.closed = true
	for _, s := range t.sends {
		s.cancel(t)
	}
	for _, p := range t.inq.Active() {
		for _, r := range t.inq.Peer(p) {
			r.cancel(t)
		}
	}
	for _, rr := range t.reads {
		if rr.left > 0 {
			if rr.err == nil {
				rr.err = errors.New("ucx: transport closed")
			}
			rr.cancel(t)
		}
	}
	for _, s := range t.raw {
		t.cancelReq(s.req)
	}
	// Cancelled requests complete at the next progress; the memory they
	// name (pinned sends, receive buffers) is released only then.
	deadline := time.Now().Add(5 * time.Second)
	for (len(t.sends) > 0 || t.inq.Busy() || t.regionsBusy()) && time.Now().Before(deadline) {
		C.mg_progress(t.u)
		t.checkRaw()
		over = t.checkReads(over)
		for i := 0; i < len(t.sends); i++ {
			s := t.sends[i]
			if s.over() {
				C.free(unsafe.Pointer(s.sb))
				s.done <- errors.New("ucx: transport closed")
				t.sends = slices.Delete(t.sends, i, i+1)
				i--
			}
		}
		t.inq.Take(func(r *recvReq) bool {
			r.posted = true // no payload's receive is posted any more
			for _, q := range []*unsafe.Pointer{&r.req, &r.req2} {
				if *q != nil && C.mg_check(*q) != C.UCS_INPROGRESS {
					*q = nil
				}
			}
			return r.req == nil && r.req2 == nil
		}, func(_ int, r *recvReq) { t.putBuf(r.buf) })
	}
	for tok, r := range t.regions {
		t.releaseRegion(tok, r)
	}
	if len(t.sends) > 0 || t.inq.Busy() || t.regionsBusy() {
		// Requests UCX did not end: their memory must stay, so leak it
		// rather than free what the library may still write.
		for _, s := range t.sends {
			s.done <- errors.New("ucx: transport closed")
		}
		return errors.New("ucx: requests still under way at close")
	}
	t.releaseMemory()
	C.mg_close(t.u)
	t.releaseAbandoned()
	t.dropKept()
	if t.spare.p != nil {
		C.free(t.spare.p)
		t.spare = cbuf{}
	}
	if t.scratch != nil {
		C.free(unsafe.Pointer(t.scratch))
		t.scratch = nil
	}
	for p := range t.gath {
		t.dropGathered(p)
	}
	return nil
}

// The gathering of small frames (fabric.Gather).

// gatherBit is the tag bit MG_GATHER: a message of gathered frames, from
// the rank in the low bits.
const gatherBit = uint64(1) << 60

var _ [maxWhole - fabric.GatherCap]struct{} // a gathered message is received whole

// gather adds f, with its payload of n bytes, to the frames gathered for
// peer, sending those first if f does not fit, and reports whether it is
// the first frame gathered since the last flush. t.wmu is held.
func (t *Transport) gather(f wire.Frame, peer, n int) (bool, error) {
	g := &t.gath[peer]
	if g.n+wire.HeaderSize+n > fabric.GatherCap {
		t.flushPeer(peer)
	}
	if g.sb == nil {
		if g.sb = C.mg_sbuf_alloc(C.size_t(fabric.GatherCap - wire.HeaderSize)); g.sb == nil {
			return false, fmt.Errorf("ucx: sending to rank %d: out of memory", peer)
		}
	}
	g.n += fabric.PutFrame(unsafe.Slice((*byte)(unsafe.Pointer(&g.sb.hdr[0])), fabric.GatherCap)[g.n:], f, n)
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
// frame as itself); a send left pending ends as any other, with nobody
// waiting, and a failure is reported by the next step. t.wmu is held.
func (t *Transport) sendGathered(peer int) {
	g := &t.gath[peer]
	sb, n, count := g.sb, g.n, g.count
	g.n, g.count = 0, 0
	if n == 0 {
		return
	}
	if t.failed[peer] != nil {
		return // reported: the frames go with the peer
	}
	if err := t.peerErr(peer); err != nil {
		t.gatherFails = append(t.gatherFails, fabric.Failure{Peer: peer, Err: err})
		return
	}
	tag := uint64(t.cfg.Rank)
	if count > 1 {
		tag |= gatherBit
	}
	st := C.mg_send(t.up, C.int(peer), C.uint64_t(tag), C.uintptr_t(uintptr(unsafe.Pointer(sb))), 0, C.size_t(n-wire.HeaderSize), 1, 1)
	switch {
	case st == 1:
		g.sb = nil // the pending send's now
		t.sends = append(t.sends, &sendReq{req: t.u.sreq, sb: sb, peer: peer, done: make(chan error, 1)})
	case st < 0:
		t.gatherFails = append(t.gatherFails, fabric.Failure{Peer: peer,
			Err: fmt.Errorf("ucx: sending %d frames gathered to rank %d: %w", count, peer, status(st))})
	}
}

// dropGathered frees what was gathered for peer, whose frames will not
// go (it failed, or the transport closed); t.wmu is held.
func (t *Transport) dropGathered(peer int) {
	if t.gp == nil {
		return
	}
	g := &t.gath[peer]
	if g.sb != nil {
		C.free(unsafe.Pointer(g.sb))
	}
	*g = gatherBuf{}
	t.gp.Drop(peer)
}
