/*
 * kairos-launcher: starts an executor's sandboxed runs off its event loop, in sandboxes made once
 * per slot (docs/decisions.md, "Runs start in a sandbox kept per slot").
 *
 * One binary, two roles:
 *
 *   kairos-launcher serve      the launcher: a child of the executor (root), one per executor. It
 *                              reads requests on stdin and writes events on stdout (frames below),
 *                              keeps one bubblewrap sandbox per slot alive (started as the slot's
 *                              uid), and relays each run's output.
 *   kairos-launcher zygote     inside each slot's sandbox: for each run it clones the run's init
 *                              into new PID, mount and IPC namespaces. It keeps CAP_SYS_ADMIN,
 *                              CAP_SETPCAP and CAP_NET_ADMIN (the run's loopback) in the sandbox's
 *                              own user namespace (bubblewrap's --disable-userns nested one),
 *                              never outside it, and a run gets none.
 *
 * A run (the "init" below, pid 1 of the run's own PID namespace):
 *   1. reads its spec from its control socket, asks the launcher to put it into the run's cgroup
 *      (the launcher learns its host pid from SCM_CREDENTIALS and writes it to cgroup.procs as
 *      root), and waits for the go-ahead;
 *   2. enters new cgroup and network namespaces (its own loopback, up: the slot's would show the
 *      next run this one's connections, its TIME_WAIT sockets and its traffic counters), mounts
 *      a fresh /proc (only the run's processes), binds the
 *      slot's work, tmp (writable) and given (read-only) directories at /work, /tmp and /kairos,
 *      a fresh tmpfs at /dev/shm, and hides the slot directory and this binary under an empty
 *      read-only tmpfs; the sandbox's root and /dev stay read-only;
 *   3. forks the program: new session, stdio on the run's pipes, rlimits, no capabilities (the
 *      bounding, ambient and inheritable sets emptied), no_new_privs, a seccomp filter refusing the
 *      kernel keyring (not namespaced: keys would outlive the run), and execve with the job's
 *      environment only;
 *   4. forwards SIGTERM and friends to the program, reaps every orphan, and once the program has
 *      ended reports its wait status and exits, which ends the namespace and everything left in it.
 * So nothing of a run survives it: its processes die with its PID namespace (and its cgroup is
 * killed by the executor), its files are in the slot's directories (emptied by the executor),
 * its IPC objects in its own IPC namespace, its mounts in its own mount namespace, its sockets
 * (and what the kernel keeps of them after, TIME_WAIT, counters) in its own network namespace.
 *
 * Frames (little-endian u32 length, then the payload):
 *   executor -> launcher  fields separated by NUL bytes, the first naming the request:
 *     S slot uid bwrap arg...        define slot's sandbox (started at once, and again when it dies)
 *     R id slot nprocs procs... nofile fsize nproc as shm npaths paths... argc argv... envc env...
 *                                    start a run (numbers in decimal; 0: no such limit; paths: the
 *                                    node's configured binds, bound again over /work and /tmp)
 *     K id signo                     signal a run (its init forwards SIGTERM & co to the program;
 *                                    SIGKILL ends the run's whole namespace)
 *   launcher -> executor  u8 type, u32 id, data:
 *     P  the run started: its init's host pid (decimal)
 *     O  / E  a chunk of its stdout / stderr
 *     D  it ended: "x<code>", "s<signal>", or "e<why it could not start>"
 *     L  a note about a slot's sandbox (id = slot): it died, or bubblewrap said something
 * When the executor goes (stdin closes, or its death signal), every sandbox dies with the launcher.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SLOTS 4096
#define MAX_SPEC (4u << 20)
#define CHUNK 65536
#define ZYGOTE_FD 3
#define SLOT_DIR "/.kairos/slot"
#define HIDE_DIR "/.kairos"
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static void die(const char *what) {
  dprintf(2, "kairos-launcher: %s: %s\n", what, strerror(errno));
  _exit(125);
}

/* ---------- the fields of a frame ---------- */

struct fields {
  char **v;
  int n;
};

/* Splits a NUL-separated payload (its last field NUL-terminated) into fields, in place. */
static int split(char *buf, uint32_t len, struct fields *f) {
  int n = 0;
  for (uint32_t i = 0; i < len; i++)
    if (buf[i] == 0) n++;
  f->v = calloc(n + 1, sizeof(char *));
  if (!f->v) return -1;
  f->n = 0;
  char *p = buf;
  for (uint32_t i = 0; i < len; i++) {
    if (buf[i] == 0) {
      f->v[f->n++] = p;
      p = buf + i + 1;
    }
  }
  return 0;
}

static long num(const char *s) { return s ? strtol(s, NULL, 10) : 0; }

/* ---------- the run's init and program (inside the sandbox) ---------- */

static volatile pid_t program_pid = 0;
/* A stop that came while the run was still being set up: sent to the program once it exists. */
static volatile sig_atomic_t early_signal = 0;
static const int forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH};
#define NFORWARDED (sizeof(forwarded) / sizeof(forwarded[0]))

static void forward(int sig) {
  if (program_pid > 0) kill(program_pid, sig);
  else if (!early_signal) early_signal = sig;
}

/* Sends one byte with one control message (credentials, or descriptors) on a SEQPACKET socket. */
static ssize_t send_with(int fd, char byte, int type, const void *data, size_t len, int flags) {
  char cbuf[CMSG_SPACE(3 * sizeof(int)) > CMSG_SPACE(sizeof(struct ucred)) ? CMSG_SPACE(3 * sizeof(int)) : CMSG_SPACE(sizeof(struct ucred))];
  memset(cbuf, 0, sizeof(cbuf));
  struct iovec iov = {.iov_base = &byte, .iov_len = 1};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = CMSG_SPACE(len)};
  struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = type;
  c->cmsg_len = CMSG_LEN(len);
  memcpy(CMSG_DATA(c), data, len);
  return sendmsg(fd, &mh, flags);
}

/* The kernel keyring is not namespaced: a key added by one run would be there for the next. */
static int seccomp_no_keyring(void) {
  struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
#if defined(__x86_64__)
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
#elif defined(__aarch64__)
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_AARCH64, 1, 0),
#else
#error "kairos-launcher: add this architecture's AUDIT_ARCH"
#endif
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
    /* x32 system calls (bit 30) are another table: refused. */
    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 3, 0),
#else
    BPF_JUMP(BPF_JMP | BPF_JA, 0, 0, 0),
#endif
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_add_key, 2, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_request_key, 1, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_keyctl, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = sizeof(filter) / sizeof(filter[0]), .filter = filter};
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* No capabilities at all, and none to gain: bounding, ambient, inheritable, permitted, effective. */
static int drop_caps(void) {
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) return -1;
  for (int c = 0; c <= 63; c++)
    if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) return -1;
  struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct d[2];
  memset(d, 0, sizeof(d));
  return syscall(SYS_capset, &h, d);
}

/* execve through the job's PATH (not the zygote's): the shell's 126 and 127 on failure, with why. */
static void exec_program(char **argv, char **envp) {
  const char *prog = argv[0];
  if (!prog || !*prog) {
    dprintf(2, "kairos: the run has no program to start\n");
    _exit(127);
  }
  if (strchr(prog, '/')) {
    execve(prog, argv, envp);
  } else {
    const char *path = DEFAULT_PATH;
    for (char **e = envp; *e; e++)
      if (strncmp(*e, "PATH=", 5) == 0) path = *e + 5;
    int saved = ENOENT;
    char buf[4096];
    for (const char *p = path;; p++) {
      const char *end = strchrnul(p, ':');
      int dl = (int)(end - p);
      if (snprintf(buf, sizeof(buf), "%.*s%s%s", dl, p, dl ? "/" : "", prog) < (int)sizeof(buf)) {
        execve(buf, argv, envp);
        if (errno == EACCES || errno == ENOEXEC) saved = errno;
        else if (errno != ENOENT && errno != ENOTDIR && saved == ENOENT) saved = errno;
      }
      if (!*end) break;
      p = end;
    }
    errno = saved;
  }
  int e = errno;
  if (e == ENOENT) dprintf(2, "kairos: program not found: \"%s\"%s\n", prog, strchr(prog, '/') ? "" : " (not in the job's PATH)");
  else dprintf(2, "kairos: cannot run \"%s\": %s\n", prog, strerror(e));
  _exit(e == ENOENT ? 127 : 126);
}

/* The run's own network namespace starts with its loopback down: up, as bubblewrap does. */
static int loopback_up(void) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  struct ifreq ifr;
  memset(&ifr, 0, sizeof(ifr));
  strcpy(ifr.ifr_name, "lo");
  int rc = ioctl(s, SIOCGIFFLAGS, &ifr);
  if (rc == 0) {
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    rc = ioctl(s, SIOCSIFFLAGS, &ifr);
  }
  int e = errno;
  close(s);
  errno = e;
  return rc;
}

static void init_fail(int ctl, const char *what) {
  char msg[512];
  int n = snprintf(msg, sizeof(msg), "F%s: %s", what, strerror(errno));
  send(ctl, msg, n, MSG_NOSIGNAL);
  _exit(0);
}

/* pid 1 of the run's namespaces: set up, start the program, forward signals, reap, report. */
static void run_init(int out, int err, int ctl) {
  char *spec = malloc(MAX_SPEC);
  if (!spec) _exit(1);
  ssize_t len = recv(ctl, spec, MAX_SPEC - 1, 0);
  if (len <= 0) _exit(1);
  spec[len] = 0;
  struct fields f;
  if (split(spec, len, &f) < 0 || f.n < 7) init_fail(ctl, "a malformed run spec");
  long nofile = num(f.v[0]), fsize = num(f.v[1]), nproc = num(f.v[2]), as = num(f.v[3]), shm_mb = num(f.v[4]);
  int npaths = (int)num(f.v[5]);
  if (npaths < 0 || 6 + npaths >= f.n) init_fail(ctl, "a malformed run spec");
  char **paths = f.v + 6;
  int at = 6 + npaths;
  int argc = (int)num(f.v[at]);
  if (argc < 1 || at + 1 + argc >= f.n) init_fail(ctl, "a malformed run spec");
  char **argv = calloc(argc + 1, sizeof(char *));
  for (int i = 0; i < argc; i++) argv[i] = f.v[at + 1 + i];
  int envc = (int)num(f.v[at + 1 + argc]);
  if (at + 2 + argc + envc > f.n) init_fail(ctl, "a malformed run spec");
  char **envp = calloc(envc + 1, sizeof(char *));
  for (int i = 0; i < envc; i++) envp[i] = f.v[at + 2 + argc + i];

  /* Signals are forwarded from now on (as pid 1 we would not even receive one we had no handler for). */
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = forward;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (unsigned i = 0; i < NFORWARDED; i++) sigaction(forwarded[i], &sa, NULL);

  /* Into the run's cgroup (the launcher writes our host pid), before anything is charged. */
  struct ucred cred = {.pid = getpid(), .uid = getuid(), .gid = getgid()};
  if (send_with(ctl, 'J', SCM_CREDENTIALS, &cred, sizeof(cred), MSG_NOSIGNAL) < 0) _exit(1);
  char go[256];
  ssize_t g = recv(ctl, go, sizeof(go), 0);
  if (g <= 0 || go[0] != 'G') _exit(0);

  /* After the cgroup join, so the namespaces' kernel memory is the run's. */
  if (unshare(CLONE_NEWCGROUP | CLONE_NEWNET) < 0) init_fail(ctl, "cgroup and network namespaces");
  if (loopback_up() < 0) init_fail(ctl, "bringing the loopback interface up");
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) init_fail(ctl, "making mounts private");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) init_fail(ctl, "mounting /proc");
  /* The node's configured paths, held before /work and /tmp are bound (they may lie below them). */
  int *held = calloc(npaths + 1, sizeof(int));
  for (int i = 0; i < npaths; i++) held[i] = open(paths[i], O_PATH | O_CLOEXEC);
  static const char *binds[][2] = {{SLOT_DIR "/work", "/work"}, {SLOT_DIR "/tmp", "/tmp"}, {SLOT_DIR "/given", "/kairos"}};
  for (int i = 0; i < 3; i++) {
    unsigned long ro = i == 2 ? MS_RDONLY : 0;
    if (mount(binds[i][0], binds[i][1], NULL, MS_BIND, NULL) < 0) init_fail(ctl, binds[i][1]);
    if (mount(NULL, binds[i][1], NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | ro, NULL) < 0) init_fail(ctl, binds[i][1]);
  }
  for (int i = 0; i < npaths; i++) {
    struct stat st;
    if (held[i] < 0 || fstat(held[i], &st) < 0) continue;
    /* Its mount point, where it is missing (below /work or /tmp now): made as the run's. */
    char point[4096];
    snprintf(point, sizeof(point), "%s", paths[i]);
    for (char *c = point + 1; *c; c++) {
      if (*c != '/') continue;
      *c = 0;
      mkdir(point, 0755);
      *c = '/';
    }
    if (S_ISDIR(st.st_mode)) mkdir(point, 0755);
    else close(open(point, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    char from[64];
    snprintf(from, sizeof(from), "/proc/self/fd/%d", held[i]);
    if (mount(from, paths[i], NULL, MS_BIND | MS_REC, NULL) < 0) init_fail(ctl, paths[i]);
    close(held[i]);
  }
  char shmopt[64];
  snprintf(shmopt, sizeof(shmopt), "mode=1777,size=%ldm", shm_mb > 0 ? shm_mb : 64);
  if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, shmopt) < 0) init_fail(ctl, "/dev/shm");
  if (mount("tmpfs", HIDE_DIR, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") < 0) init_fail(ctl, "hiding the slot");

  struct rlimit rl;
  if (nofile > 0) {
    rl.rlim_cur = rl.rlim_max = nofile;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0) init_fail(ctl, "RLIMIT_NOFILE");
  }
  if (fsize > 0) {
    rl.rlim_cur = rl.rlim_max = fsize;
    if (setrlimit(RLIMIT_FSIZE, &rl) < 0) init_fail(ctl, "RLIMIT_FSIZE");
  }
  if (nproc > 0) {
    rl.rlim_cur = rl.rlim_max = nproc;
    if (setrlimit(RLIMIT_NPROC, &rl) < 0) init_fail(ctl, "RLIMIT_NPROC");
  }
  if (as > 0) {
    rl.rlim_cur = rl.rlim_max = as;
    if (setrlimit(RLIMIT_AS, &rl) < 0) init_fail(ctl, "RLIMIT_AS");
  }

  sigset_t block, old;
  sigemptyset(&block);
  for (unsigned i = 0; i < NFORWARDED; i++) sigaddset(&block, forwarded[i]);
  sigprocmask(SIG_BLOCK, &block, &old);

  pid_t p = fork();
  if (p < 0) init_fail(ctl, "fork");
  if (p == 0) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (unsigned i = 0; i < NFORWARDED; i++) sigaction(forwarded[i], &dfl, NULL);
    sigprocmask(SIG_SETMASK, &old, NULL);
    setsid();
    int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(125);
    /* Nothing of the init's (its control socket above all) reaches the program: fail closed. */
    if (syscall(SYS_close_range, 3, ~0U, 0) < 0) { dprintf(2, "kairos: close_range: %s\n", strerror(errno)); _exit(125); }
    if (chdir("/work") < 0) { dprintf(2, "kairos: chdir /work: %s\n", strerror(errno)); _exit(125); }
    if (drop_caps() < 0) { dprintf(2, "kairos: dropping capabilities: %s\n", strerror(errno)); _exit(125); }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_no_keyring() < 0) { dprintf(2, "kairos: seccomp: %s\n", strerror(errno)); _exit(125); }
    exec_program(argv, envp);
  }
  program_pid = p;
  if (early_signal) kill(p, early_signal);
  close(out);
  close(err);
  sigprocmask(SIG_SETMASK, &old, NULL);
  for (;;) {
    int st;
    pid_t w = waitpid(-1, &st, 0);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) _exit(0);
    if (w == p) {
      char msg[32];
      int n = snprintf(msg, sizeof(msg), "X%d", st);
      send(ctl, msg, n, MSG_NOSIGNAL);
      /* Whatever the program left behind ends with us (pid 1): no daemon outlives its run. */
      _exit(0);
    }
  }
}

static void on_sigchld(int sig) { (void)sig; }

/* The zygote's command line, which a run's init (a clone of it) overwrites with its own name. */
static char *args_start;
static size_t args_len;

static void rename_init(void) {
  if (!args_start || args_len < 12) return;
  memset(args_start, 0, args_len);
  memcpy(args_start, "kairos-init", 11);
  prctl(PR_SET_NAME, "kairos-init", 0, 0, 0);
}

/* Inside a slot's sandbox: one run at a time arrives with its pipes and control socket. */
static int zygote(void) {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* a run cannot read or trace us, nor our descriptors */
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  syscall(SYS_close_range, ZYGOTE_FD + 1, ~0U, 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_NOCLDSTOP; /* no SA_RESTART: a child's end interrupts recvmsg, so it is reaped */
  sigaction(SIGCHLD, &sa, NULL);
  for (;;) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
    char byte;
    char cbuf[CMSG_SPACE(3 * sizeof(int))];
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
    ssize_t r = recvmsg(ZYGOTE_FD, &mh, MSG_CMSG_CLOEXEC);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return 0; /* the launcher is gone: so are we, and the sandbox with us */
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(3 * sizeof(int))) continue;
    int fds[3];
    memcpy(fds, CMSG_DATA(c), sizeof(fds));
    long pid = syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) {
      rename_init();
      close(ZYGOTE_FD);
      for (int i = 0; i < 3; i++) fcntl(fds[i], F_SETFD, 0);
      run_init(fds[0], fds[1], fds[2]);
    }
    if (pid < 0) {
      char msg[256];
      int n = snprintf(msg, sizeof(msg), "Fcloning the run's namespaces: %s", strerror(errno));
      send(fds[2], msg, n, MSG_NOSIGNAL);
    }
    for (int i = 0; i < 3; i++) close(fds[i]);
  }
}

/* ---------- the launcher (root, outside) ---------- */

struct slot {
  int defined;
  uid_t uid;
  char **argv; /* bwrap and its arguments */
  char *argbuf;
  pid_t pid;   /* the sandbox's bubblewrap, 0 when down */
  int sock;    /* to its zygote, -1 when down */
  int errfd;   /* bubblewrap's stderr, -1 when closed */
  char lasterr[512]; /* the last thing bubblewrap said */
};

struct run {
  uint32_t id;
  int slot;
  int out, err, ctl; /* -1 once closed */
  pid_t pid;         /* the run init's host pid, 0 before it joined */
  int pidfd;         /* the init's pidfd: readable once it and its whole namespace are gone; -1 when none */
  char **procs;
  int nprocs;
  char *specbuf;     /* owns procs */
  int pending_signal;
  char end[600];     /* what to report: x<code>, s<sig> or e<why> */
  struct run *next;
};

static struct slot *slots;
static struct run *runs;
static int ep;

/* Tags in epoll data: the kind of descriptor in the top bits, its index below. */
enum { TAG_STDIN = 1, TAG_OUT, TAG_ERR, TAG_CTL, TAG_SLOTERR, TAG_SLOTSOCK, TAG_PIDFD };
static uint64_t tag(int kind, uint64_t v) { return ((uint64_t)kind << 56) | v; }

static void emit(char type, uint32_t id, const void *data, uint32_t len) {
  uint32_t total = 5 + len;
  char head[9];
  memcpy(head, &total, 4);
  head[4] = type;
  memcpy(head + 5, &id, 4);
  struct iovec iov[2] = {{head, 9}, {(void *)data, len}};
  size_t want = 9 + len;
  while (want > 0) {
    ssize_t w = writev(1, iov, 2);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) _exit(0); /* the executor stopped reading: it is gone */
    want -= w;
    size_t k = w;
    for (int i = 0; i < 2 && k > 0; i++) {
      size_t t = k < iov[i].iov_len ? k : iov[i].iov_len;
      iov[i].iov_base = (char *)iov[i].iov_base + t;
      iov[i].iov_len -= t;
      k -= t;
    }
  }
}

static void note(int slot, const char *fmt, const char *arg) {
  char msg[1024];
  int n = snprintf(msg, sizeof(msg), fmt, arg);
  emit('L', slot, msg, n < (int)sizeof(msg) ? n : (int)sizeof(msg) - 1);
}

static struct run *find_run(uint32_t id) {
  for (struct run *r = runs; r; r = r->next)
    if (r->id == id) return r;
  return NULL;
}

static void close_fd(int *fd) {
  if (*fd >= 0) {
    epoll_ctl(ep, EPOLL_CTL_DEL, *fd, NULL);
    close(*fd);
    *fd = -1;
  }
}

static void finish_if_done(struct run *r) {
  /* Reported only once the run's init has exited, which is after every process of its namespace. */
  if (r->out >= 0 || r->err >= 0 || r->ctl >= 0 || r->pidfd >= 0) return;
  /* Its init ended without a word: killed (by the executor, or with its sandbox), or never started. */
  if (!r->end[0] && r->pid == 0)
    snprintf(r->end, sizeof(r->end), "ethe slot's sandbox ended before the run started%s%s", slots[r->slot].lasterr[0] ? ": " : "", slots[r->slot].lasterr);
  else if (!r->end[0])
    strcpy(r->end, "s9");
  emit('D', r->id, r->end, strlen(r->end));
  struct run **pp = &runs;
  while (*pp != r) pp = &(*pp)->next;
  *pp = r->next;
  free(r->specbuf);
  free(r->procs);
  free(r);
}

static void slot_down(int i) {
  struct slot *s = &slots[i];
  if (s->sock >= 0) {
    epoll_ctl(ep, EPOLL_CTL_DEL, s->sock, NULL);
    close(s->sock);
  }
  s->sock = -1;
  if (s->pid > 0) {
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
  }
  s->pid = 0;
}

/* Starts slot i's sandbox: bubblewrap as the slot's uid, no privileges, dying with us. */
static int slot_up(int i) {
  struct slot *s = &slots[i];
  int sv[2], ev[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) return -1;
  if (pipe2(ev, O_CLOEXEC) < 0) {
    close(sv[0]);
    close(sv[1]);
    return -1;
  }
  int big = 8 << 20;
  setsockopt(sv[0], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
  pid_t parent = getpid();
  pid_t p = fork();
  if (p < 0) {
    int e = errno;
    close(sv[0]);
    close(sv[1]);
    close(ev[0]);
    close(ev[1]);
    errno = e;
    return -1;
  }
  if (p == 0) {
    if (dup2(sv[1], ZYGOTE_FD) < 0 || dup2(ev[1], 2) < 0) _exit(125);
    int devnull = open("/dev/null", O_RDWR);
    dup2(devnull, 0);
    dup2(devnull, 1);
    syscall(SYS_close_range, ZYGOTE_FD + 1, ~0U, 0);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) die("no_new_privs");
    if (getuid() == 0) {
      for (int c = 0; c <= 63; c++) prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
      if (setgroups(0, NULL) < 0 || setresgid(s->uid, s->uid, s->uid) < 0 || setresuid(s->uid, s->uid, s->uid) < 0) die("dropping to the slot's user");
    }
    /* Set after the uid change, which clears it: the sandbox dies with the launcher. */
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent) _exit(125);
    char *envp[] = {NULL};
    execve(s->argv[0], s->argv, envp);
    die("starting bubblewrap");
  }
  close(sv[1]);
  close(ev[1]);
  /* Never blocks the loop: an event of the sandbox before this one may still be in a batch. */
  fcntl(ev[0], F_SETFL, O_NONBLOCK);
  s->pid = p;
  s->sock = sv[0];
  if (s->errfd >= 0) close_fd(&s->errfd);
  s->errfd = ev[0];
  struct epoll_event e = {.events = EPOLLIN, .data.u64 = tag(TAG_SLOTERR, i)};
  epoll_ctl(ep, EPOLL_CTL_ADD, ev[0], &e);
  struct epoll_event e2 = {.events = EPOLLRDHUP, .data.u64 = tag(TAG_SLOTSOCK, i)};
  epoll_ctl(ep, EPOLL_CTL_ADD, sv[0], &e2);
  return 0;
}

static void define_slot(struct fields *f, char *buf) {
  int i = f->n >= 4 ? (int)num(f->v[1]) : -1;
  if (i < 0 || i >= MAX_SLOTS) {
    free(buf);
    return;
  }
  struct slot *s = &slots[i];
  if (s->defined) {
    /* The old sandbox's stderr too: left open (and in epoll), its end would be read from the new one's. */
    slot_down(i);
    close_fd(&s->errfd);
    free(s->argv);
    free(s->argbuf);
  } else {
    s->sock = -1;
    s->errfd = -1;
  }
  s->defined = 1;
  s->lasterr[0] = 0;
  s->uid = (uid_t)num(f->v[2]);
  s->argbuf = buf;
  s->argv = calloc(f->n - 2, sizeof(char *));
  for (int k = 3; k < f->n; k++) s->argv[k - 3] = f->v[k];
  if (slot_up(i) < 0) note(i, "could not start the slot's sandbox: %s", strerror(errno));
}

static void fail_run(uint32_t id, const char *why) {
  char msg[600];
  int n = snprintf(msg, sizeof(msg), "e%s", why);
  emit('D', id, msg, n < (int)sizeof(msg) ? n : (int)sizeof(msg) - 1);
}

/* R id slot nprocs procs... then the run's own spec (see run_init), passed on as it is */
static void start_run(struct fields *f, char *buf) {
  uint32_t id = (uint32_t)num(f->v[1]);
  int i = (int)num(f->v[2]);
  int nprocs = f->n >= 4 ? (int)num(f->v[3]) : -1;
  /* nprocs is compared with what is left (4 + nprocs + 7 could overflow) */
  if (f->n < 11 || i < 0 || i >= MAX_SLOTS || !slots[i].defined || nprocs < 0 || nprocs > f->n - 11) {
    fail_run(id, "the launcher got a malformed start request");
    free(buf);
    return;
  }
  if (find_run(id)) {
    /* Two runs of one id: each one's events would be taken for the other's. */
    fail_run(id, "the launcher got a start request for a run id in use");
    free(buf);
    return;
  }
  char *spec = f->v[4 + nprocs];
  char *spec_end = f->v[f->n - 1] + strlen(f->v[f->n - 1]) + 1;
  size_t payload_len = spec_end - spec;
  char *payload = malloc(payload_len);
  if (!payload) {
    fail_run(id, "out of memory");
    free(buf);
    return;
  }
  memcpy(payload, spec, payload_len);
  if (payload_len >= MAX_SPEC) {
    free(payload);
    fail_run(id, "the program's arguments and environment are larger than 4 MiB");
    free(buf);
    return;
  }

  struct slot *s = &slots[i];
  if (s->sock < 0 && slot_up(i) < 0) {
    free(payload);
    fail_run(id, "could not start the slot's sandbox");
    free(buf);
    return;
  }
  int po[2], pe[2], pc[2];
  if (pipe2(po, O_CLOEXEC) < 0) goto fail0;
  if (pipe2(pe, O_CLOEXEC) < 0) goto fail1;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pc) < 0) goto fail2;
  int one = 1, big = 8 << 20;
  setsockopt(pc[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
  setsockopt(pc[0], SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
  if (send(pc[0], payload, payload_len, MSG_NOSIGNAL) < 0) goto fail3;
  free(payload);
  payload = NULL;
  {
    int fds[3] = {po[1], pe[1], pc[1]};
    if (send_with(s->sock, 'R', SCM_RIGHTS, fds, sizeof(fds), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
      /* The zygote is gone (its sandbox died): the sandbox again, and this run in it. */
      slot_down(i);
      if (slot_up(i) < 0 || send_with(slots[i].sock, 'R', SCM_RIGHTS, fds, sizeof(fds), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) goto fail3;
    }
  }
  close(po[1]);
  close(pe[1]);
  close(pc[1]);
  fcntl(po[0], F_SETFL, O_NONBLOCK);
  fcntl(pe[0], F_SETFL, O_NONBLOCK);
  struct run *r = calloc(1, sizeof(*r));
  r->id = id;
  r->slot = i;
  r->out = po[0];
  r->err = pe[0];
  r->ctl = pc[0];
  r->pidfd = -1;
  r->specbuf = buf;
  r->nprocs = nprocs;
  r->procs = calloc(nprocs + 1, sizeof(char *));
  for (int k = 0; k < nprocs; k++) r->procs[k] = f->v[4 + k];
  r->next = runs;
  runs = r;
  struct epoll_event e;
  e.events = EPOLLIN;
  e.data.u64 = tag(TAG_OUT, id);
  epoll_ctl(ep, EPOLL_CTL_ADD, r->out, &e);
  e.data.u64 = tag(TAG_ERR, id);
  epoll_ctl(ep, EPOLL_CTL_ADD, r->err, &e);
  e.data.u64 = tag(TAG_CTL, id);
  epoll_ctl(ep, EPOLL_CTL_ADD, r->ctl, &e);
  return;
fail3:
  close(pc[0]);
  close(pc[1]);
fail2:
  close(pe[0]);
  close(pe[1]);
fail1:
  close(po[0]);
  close(po[1]);
fail0:
  free(payload);
  fail_run(id, strerror(errno));
  free(buf);
}

static void signal_run(struct fields *f) {
  if (f->n < 3) return;
  struct run *r = find_run((uint32_t)num(f->v[1]));
  int sig = (int)num(f->v[2]);
  if (!r || sig <= 0 || sig >= 65) return;
  if (r->pidfd >= 0) syscall(SYS_pidfd_send_signal, r->pidfd, sig, NULL, 0); /* never a reused pid */
  else if (r->pid > 0) kill(r->pid, sig);
  else if (sig == SIGKILL || !r->pending_signal) r->pending_signal = sig;
}

/* The run's init asks to join its cgroup (J), reports its program's end (X) or a failure (F). */
static void on_ctl(struct run *r) {
  char buf[1024];
  char cbuf[CMSG_SPACE(sizeof(struct ucred))];
  struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf) - 1};
  struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
  ssize_t n = recvmsg(r->ctl, &mh, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    close_fd(&r->ctl);
    return;
  }
  buf[n] = 0;
  if (buf[0] == 'J' && r->pid == 0) {
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    if (!c || c->cmsg_type != SCM_CREDENTIALS) {
      snprintf(r->end, sizeof(r->end), "ethe run's init sent no credentials");
      close_fd(&r->ctl);
      return;
    }
    struct ucred cred;
    memcpy(&cred, CMSG_DATA(c), sizeof(cred));
    r->pid = cred.pid;
    r->pidfd = (int)syscall(SYS_pidfd_open, cred.pid, 0);
    if (r->pidfd >= 0) {
      fcntl(r->pidfd, F_SETFD, FD_CLOEXEC);
      struct epoll_event pe = {.events = EPOLLIN, .data.u64 = tag(TAG_PIDFD, r->id)};
      epoll_ctl(ep, EPOLL_CTL_ADD, r->pidfd, &pe);
    }
    char pid[32];
    int pl = snprintf(pid, sizeof(pid), "%d\n", cred.pid);
    for (int k = 0; k < r->nprocs; k++) {
      int fd = open(r->procs[k], O_WRONLY | O_CLOEXEC);
      if (fd < 0 || write(fd, pid, pl) != pl) {
        snprintf(r->end, sizeof(r->end), "ecould not put the run into its cgroup %s: %s", r->procs[k], strerror(errno));
        if (fd >= 0) close(fd);
        kill(r->pid, SIGKILL);
        close_fd(&r->ctl);
        return;
      }
      close(fd);
    }
    if (r->pending_signal == SIGKILL) {
      kill(r->pid, SIGKILL);
      return;
    }
    send(r->ctl, "G", 1, MSG_NOSIGNAL);
    emit('P', r->id, pid, pl - 1);
    if (r->pending_signal) kill(r->pid, r->pending_signal);
  } else if (buf[0] == 'X') {
    int st = atoi(buf + 1);
    if (WIFEXITED(st)) snprintf(r->end, sizeof(r->end), "x%d", WEXITSTATUS(st));
    else if (WIFSIGNALED(st)) snprintf(r->end, sizeof(r->end), "s%d", WTERMSIG(st));
  } else if (buf[0] == 'F') {
    snprintf(r->end, sizeof(r->end), "ethe run's sandbox could not be set up: %.500s", buf + 1);
  }
}

static void relay(struct run *r, int *fd, char type) {
  static char buf[CHUNK];
  ssize_t n = read(*fd, buf, sizeof(buf));
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n <= 0) {
    close_fd(fd);
    return;
  }
  emit(type, r->id, buf, n);
}

static void on_slot_stderr(int i) {
  char buf[1024];
  ssize_t n = read(slots[i].errfd, buf, sizeof(buf) - 1);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return; /* an event of a sandbox since replaced */
  if (n <= 0) {
    close_fd(&slots[i].errfd);
    return;
  }
  buf[n] = 0;
  while (n > 0 && buf[n - 1] == '\n') buf[--n] = 0;
  snprintf(slots[i].lasterr, sizeof(slots[i].lasterr), "%.500s", buf);
  note(i, "the slot's sandbox: %s", buf);
}

static char *stdin_buf;
static size_t stdin_len, stdin_cap;

static void on_request(char *payload, uint32_t len) {
  if (len == 0 || payload[len - 1] != 0) {
    free(payload);
    return;
  }
  struct fields f;
  if (split(payload, len, &f) < 0 || f.n < 1) {
    free(payload);
    return;
  }
  switch (f.v[0][0]) {
    case 'S': define_slot(&f, payload); break; /* keeps payload */
    case 'R': start_run(&f, payload); break;   /* keeps or frees payload */
    case 'K': signal_run(&f); free(payload); break;
    default: free(payload);
  }
  free(f.v);
}

/* Reads what the executor sent; false once it closed our stdin. */
static int on_stdin(void) {
  if (stdin_cap - stdin_len < CHUNK) {
    stdin_cap = stdin_cap * 2 + CHUNK;
    stdin_buf = realloc(stdin_buf, stdin_cap);
  }
  ssize_t n = read(0, stdin_buf + stdin_len, stdin_cap - stdin_len);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return 1;
  if (n <= 0) return 0;
  stdin_len += n;
  size_t off = 0;
  while (stdin_len - off >= 4) {
    uint32_t len;
    memcpy(&len, stdin_buf + off, 4);
    if (len > 64u << 20) return 0;
    if (stdin_len - off - 4 < len) break;
    char *payload = malloc(len + 1);
    memcpy(payload, stdin_buf + off + 4, len);
    payload[len] = 0;
    off += 4 + len;
    on_request(payload, len);
  }
  memmove(stdin_buf, stdin_buf + off, stdin_len - off);
  stdin_len -= off;
  return 1;
}

static int serve(void) {
  pid_t parent = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != parent) return 0;
  signal(SIGPIPE, SIG_IGN);
  signal(SIGCHLD, SIG_DFL);
  slots = calloc(MAX_SLOTS, sizeof(struct slot));
  ep = epoll_create1(EPOLL_CLOEXEC);
  fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
  struct epoll_event e = {.events = EPOLLIN, .data.u64 = tag(TAG_STDIN, 0)};
  epoll_ctl(ep, EPOLL_CTL_ADD, 0, &e);
  struct epoll_event evs[64];
  for (;;) {
    /* Sandboxes that ended: reaped, and noted (a run killed its zygote, or bubblewrap failed). */
    int st;
    pid_t w;
    while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
      for (int i = 0; i < MAX_SLOTS; i++) {
        if (slots[i].defined && slots[i].pid == w) {
          slots[i].pid = 0;
          if (slots[i].sock >= 0) {
            epoll_ctl(ep, EPOLL_CTL_DEL, slots[i].sock, NULL);
            close(slots[i].sock);
            slots[i].sock = -1;
          }
          break;
        }
      }
    }
    int n = epoll_wait(ep, evs, 64, 1000);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die("epoll_wait");
    for (int k = 0; k < n; k++) {
      uint64_t d = evs[k].data.u64;
      int kind = (int)(d >> 56);
      uint64_t v = d & ((1ULL << 56) - 1);
      if (kind == TAG_STDIN) {
        if (!on_stdin()) {
          /* The executor is gone or closing: every sandbox goes now, also one whose bubblewrap is
             still setting itself up (its parent-death signal may not hold yet). */
          for (int i = 0; i < MAX_SLOTS; i++)
            if (slots[i].defined && slots[i].pid > 0) kill(slots[i].pid, SIGKILL);
          return 0;
        }
        continue;
      }
      if (kind == TAG_SLOTERR) {
        on_slot_stderr((int)v);
        continue;
      }
      if (kind == TAG_SLOTSOCK) {
        /* The zygote hung up: its sandbox is down; the next run of the slot starts it again. (Only
           if the slot's socket now is the one that hung up: a run earlier in this batch may have
           started the sandbox again, with itself in it.) */
        struct pollfd pf = {.fd = slots[v].sock, .events = POLLRDHUP};
        if (slots[v].sock >= 0 && poll(&pf, 1, 0) == 1 && (pf.revents & (POLLRDHUP | POLLHUP | POLLERR))) slot_down((int)v);
        continue;
      }
      struct run *r = find_run((uint32_t)v);
      if (!r) continue;
      if (kind == TAG_OUT) relay(r, &r->out, 'O');
      else if (kind == TAG_ERR) relay(r, &r->err, 'E');
      else if (kind == TAG_CTL) on_ctl(r);
      else if (kind == TAG_PIDFD) close_fd(&r->pidfd);
      finish_if_done(r);
    }
  }
}

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "serve") == 0) return serve();
  if (argc >= 2 && strcmp(argv[1], "zygote") == 0) {
    args_start = argv[0];
    args_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - argv[0]);
    return zygote();
  }
  if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
    puts("kairos-launcher 1");
    return 0;
  }
  fprintf(stderr, "usage: kairos-launcher serve|zygote (started by the Kairos executor)\n");
  return 2;
}
