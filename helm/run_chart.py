#!/usr/bin/env python3
"""Runs the chart as Kubernetes would run it, without Kubernetes: see helm/run-test.sh.

The guide's Install section is the script. Its Secrets (`kubectl create secret`), its values file
(`my-values.yaml`) and its `helm install` command (run as `helm template`) give the objects; every
pod of the rendered migration Job and Deployments is started from the image's unpacked layers as a
kubelet would start it: the container's command, arguments and environment (valueFrom and $(VAR)
references resolved, the image's own environment and the Service links under it), its ConfigMap,
Secret and emptyDir volumes at their mount paths (kubelet's file layout and modes, fsGroup), the
security context's user, groups and read-only root, in a network namespace of its own with its pod
IP, and with /etc/hosts standing in for cluster DNS. The probes are polled as rendered, then the
release's NOTES are followed: `kubectl describe secret`, `kubectl exec ... token create` run in a
gateway pod, `kubectl port-forward` as a forwarder into that pod, and an MCP call through it.

PostgreSQL and Kafka are the operator's: a PostgreSQL server (the binaries inside tidemark.jar) with
the roles docs/security.md asks for, and Kafka brokers (kafka.Kafka from tidemark.jar), one per
bootstrap address, each in a network namespace of its own under the name the values give it.

Needs root (network, mount and PID namespaces). Prints "N passed, M failed".
"""
import argparse
import base64
import ctypes
import datetime
import http.client
import json
import os
import random
import re
import select
import shlex
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

CLONE_NEWNET = 0x40000000
PR_SET_NO_NEW_PRIVS = 38
NETWORK = "198.18.0"          # the pods, servers and the node: RFC 2544's test range, in namespaces of our own
SERVICE_NETWORK = "198.18.1"  # Service IPs for the Service-link variables; nothing listens there
CLUSTER_DOMAIN = "cluster.local"
PROTOCOL = "2025-11-25"
_libc = ctypes.CDLL(None, use_errno=True)


def setns(path):
    """Moves the calling thread into the network namespace at path."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, "setns " + path + ": " + os.strerror(err))
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------
# Inside a pod: the kubelet's and the runtime's part, run as PID 1 of the pod's namespaces.

def pod_init(spec_file):
    spec = json.load(open(spec_file))
    root = spec["root"]
    run = lambda *a: subprocess.run(a, check=True)
    run("mount", "-t", "overlay", "overlay", "-o",
        "lowerdir=%s,upperdir=%s,workdir=%s" % (spec["image"], spec["upper"], spec["overlaywork"]), root)
    for m in spec["mounts"]:
        target = root + m["target"]
        if m["file"]:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if not os.path.exists(target):
                open(target, "w").close()
        else:
            os.makedirs(target, exist_ok=True)
        if m.get("tmpfs"):
            run("mount", "-t", "tmpfs", "-o", "mode=1777", "tmpfs", target)
        else:
            run("mount", "--bind", m["source"], target)
            if m["readonly"]:
                run("mount", "-o", "remount,bind,ro", target)
    # what a container runtime gives every container: /proc, a small /dev, a read-only /sys
    os.makedirs(root + "/proc", exist_ok=True)
    run("mount", "-t", "proc", "proc", root + "/proc")
    os.makedirs(root + "/dev", exist_ok=True)
    run("mount", "-t", "tmpfs", "-o", "nosuid,mode=755", "tmpfs", root + "/dev")
    for dev in ("null", "zero", "full", "random", "urandom", "tty"):
        open(root + "/dev/" + dev, "w").close()
        run("mount", "--bind", "/dev/" + dev, root + "/dev/" + dev)
    os.makedirs(root + "/dev/shm")
    run("mount", "-t", "tmpfs", "-o", "nosuid,nodev,mode=1777", "shm", root + "/dev/shm")
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, root + "/dev/" + name)
    os.makedirs(root + "/sys", exist_ok=True)
    run("mount", "-t", "sysfs", "-o", "ro", "sysfs", root + "/sys")
    if spec["readOnlyRoot"]:
        run("mount", "-o", "remount,ro", root)
    socket.sethostname(spec["hostname"])
    enter(spec)


def enter(spec, argv=None):
    """chroot into the pod's root as the container's user, then exec its process (or argv, for an exec)."""
    os.chroot(spec["root"])
    os.chdir(spec["workdir"])
    os.setgroups(spec["groups"])
    os.setresgid(spec["gid"], spec["gid"], spec["gid"])
    os.setresuid(spec["uid"], spec["uid"], spec["uid"])
    if spec["noNewPrivs"] and _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    argv = argv or spec["argv"]
    env = dict(spec["env"])
    path = argv[0]
    if "/" not in path:
        # the runtime looks a bare command up in the container's PATH, inside the container
        for d in env.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":"):
            if os.access(os.path.join(d, path), os.X_OK):
                path = os.path.join(d, path)
                break
        else:
            sys.stderr.write("exec: %s: not found in the container's PATH\n" % argv[0])
            os._exit(127)
    os.execve(path, argv, env)


# ---------------------------------------------------------------------------------------------
# Reporting

class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.lock = threading.Lock()

    def record(self, sentence, ok, detail=""):
        with self.lock:
            if ok:
                self.passed += 1
                print("ok   - " + sentence, flush=True)
            else:
                self.failed += 1
                print("FAIL - " + sentence, flush=True)
                for line in str(detail).strip().splitlines()[-25:]:
                    print("       " + line, flush=True)
        return ok


def log(msg):
    print("# " + msg, flush=True)


def tail(path, n=25):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no log)"


class Failure(Exception):
    """A step that later steps cannot do without."""


# ---------------------------------------------------------------------------------------------
# The guide: its example files and the commands of its Install section

def read_guide(path):
    files, commands, section, name, block, lang = {}, [], "", None, None, ""
    for line in open(path).read().splitlines():
        if block is not None:
            if line.startswith("```"):
                text = "\n".join(block) + "\n"
                if name:
                    files[name] = text
                if lang in ("bash", "sh") and section == "Install":
                    commands.extend(shell_commands(text))
                block, name = None, None
            else:
                block.append(line)
            continue
        m = re.match(r"^<!-- file: (\S+) -->$", line)
        if m:
            name = m.group(1)
        elif line.startswith("```"):
            block, lang = [], line[3:].strip()
        elif line.startswith("## "):
            section = line[3:].strip()
    return files, commands


def shell_commands(text):
    out = []
    for line in re.sub(r"\\\n", " ", text).splitlines():
        if line.strip() and not line.strip().startswith("#"):
            out.append(shlex.split(line))
    return out


def option(argv, *names):
    """The value of the first of names in argv (--name value or --name=value); None when absent."""
    for i, a in enumerate(argv):
        for n in names:
            if a == n and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(n + "="):
                return a[len(n) + 1:]
    return None


def kubectl_secret(argv, store):
    """kubectl create secret generic NAME --namespace NS --from-literal=k=v --from-file=k=path."""
    name = next(a for a in argv[4:] if not a.startswith("-"))
    ns = option(argv, "--namespace", "-n") or "default"
    data = {}
    for i, a in enumerate(argv):
        for flag in ("--from-literal", "--from-file"):
            value = a[len(flag) + 1:] if a.startswith(flag + "=") else (argv[i + 1] if a == flag else None)
            if value is None:
                continue
            key, _, v = value.partition("=")
            data[key] = v.encode() if flag == "--from-literal" else open(v, "rb").read()
    store[("Secret", ns, name)] = {"kind": "Secret", "metadata": {"name": name, "namespace": ns},
                                   "data": {k: base64.b64encode(v).decode() for k, v in data.items()}}


# ---------------------------------------------------------------------------------------------
# The network: one namespace per host, all on one bridge in a namespace of its own

class Network:
    def __init__(self, prefix):
        self.prefix = prefix
        self.names = []
        self.next_ip = 2
        self.hosts = {}  # host name -> ip
        self.switch = self._add("sw")
        subprocess.run(["ip", "-n", self.switch, "link", "add", "br0", "type", "bridge"], check=True)
        subprocess.run(["ip", "-n", self.switch, "link", "set", "br0", "up"], check=True)

    def _add(self, name):
        ns = self.prefix + name
        subprocess.run(["ip", "netns", "add", ns], check=True)
        self.names.append(ns)
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        return ns

    def host(self, name):
        """A namespace with one address on the bridge: returns (namespace, ip)."""
        ns = self._add(name)
        ip = "%s.%d" % (NETWORK, self.next_ip)
        veth = "v%d" % self.next_ip
        self.next_ip += 1
        subprocess.run(["ip", "-n", self.switch, "link", "add", veth, "type", "veth", "peer", "name", "eth0",
                        "netns", ns], check=True)
        subprocess.run(["ip", "-n", self.switch, "link", "set", veth, "master", "br0", "up"], check=True)
        subprocess.run(["ip", "-n", ns, "addr", "add", ip + "/24", "dev", "eth0"], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", "eth0", "up"], check=True)
        self.hosts[name] = ip
        return ns, ip

    def pids(self):
        out = []
        for ns in self.names:
            r = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
            out += [int(p) for p in r.stdout.split() if int(p) != os.getpid()]
        return out

    def remove(self):
        for pid in self.pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.time() + 10
        while self.pids() and time.time() < deadline:
            time.sleep(0.1)
        for ns in reversed(self.names):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        left = [ns for ns in self.names if os.path.exists("/run/netns/" + ns)]
        self.names = []
        return left


def remove_orphans():
    """Namespaces (and what runs in them) of earlier runs that were killed before their cleanup."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split("\n")
    for ns in (line.split()[0] for line in listed if line.strip()):
        m = re.match(r"tmc(\d+)-", ns)
        if not m or os.path.exists("/proc/" + m.group(1)):
            continue
        pids = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split()
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        log("removed %s, left by a run that ended before its cleanup" % ns)


def wait_port(ip, port, seconds, proc=None):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            socket.create_connection((ip, port), timeout=1).close()
            return True
        except OSError:
            time.sleep(0.3)
    return False


# ---------------------------------------------------------------------------------------------
# The operator's servers

class Postgres:
    """A PostgreSQL server from the binaries tidemark.jar carries (the ones `tidemark dev` runs)."""

    def __init__(self, work, jar, net, host, port):
        self.dir = os.path.join(work, "postgres")
        self.bin = os.path.join(self.dir, "dist", "bin")
        self.data = os.path.join(self.dir, "data")
        self.sock = os.path.join(self.dir, "sock")
        self.log = os.path.join(work, "logs", "postgres.log")
        self.port = port
        self.ns, self.ip = net.host(host)
        os.makedirs(os.path.join(self.dir, "dist"))
        unzip = subprocess.Popen(["unzip", "-p", jar, "postgres-linux-x86_64.txz"], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-xJ", "-C", os.path.join(self.dir, "dist")], stdin=unzip.stdout, check=True)
        unzip.wait()
        for d in (self.data, self.sock):
            os.makedirs(d)
            shutil.chown(d, "nobody")
        as_nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
        subprocess.run(as_nobody + [self.bin + "/initdb", "-D", self.data, "-U", "postgres", "-A", "trust",
                                    "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C"],
                       check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write("local all all trust\nhost all all 0.0.0.0/0 scram-sha-256\n")
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", self.ns] + as_nobody + [
                self.bin + "/postgres", "-D", self.data, "-p", str(port), "-c", "listen_addresses=*",
                "-c", "unix_socket_directories=" + self.sock, "-c", "wal_level=logical",
                "-c", "max_connections=300", "-c", "max_replication_slots=20", "-c", "max_wal_senders=20"],
            stdout=open(self.log, "w"), stderr=subprocess.STDOUT)

    def ready(self):
        return wait_port(self.ip, self.port, 60, self.proc)

    def sql(self, db, text):
        return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.sock,
                               "-p", str(self.port), "-U", "postgres", "-d", db],
                              input=text, capture_output=True, text=True)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # fast shutdown
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def literal(s):
    return "'" + s.replace("'", "''") + "'"


def ident(s):
    return '"' + s.replace('"', '""') + '"'


class Kafka:
    """Brokers from tidemark.jar's kafka.Kafka, one per bootstrap address, the first also the controller."""

    def __init__(self, work, jar, net, addresses):
        self.procs, self.addresses, self.logs = [], [], []
        hosts_file = os.path.join(work, "kafka-hosts")
        nodes = []
        for i, address in enumerate(addresses):
            host, port = address.rsplit(":", 1)
            ns, ip = net.host(host)
            nodes.append((i, host, int(port), ns, ip))
            self.addresses.append((ip, int(port)))
        with open(hosts_file, "w") as f:
            f.writelines("%s %s\n" % (ip, host) for _, host, _, _, ip in nodes)
        controller = "0@%s:9093" % nodes[0][4]
        cluster_id = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
        formats = []
        for i, host, port, ns, ip in nodes:
            d = os.path.join(work, "kafka-%d" % i)
            os.makedirs(d)
            props = {
                "process.roles": "broker,controller" if i == 0 else "broker",
                "node.id": str(i),
                "controller.quorum.voters": controller,
                "controller.listener.names": "CONTROLLER",
                "listeners": "PLAINTEXT://0.0.0.0:%d" % port + (",CONTROLLER://0.0.0.0:9093" if i == 0 else ""),
                "advertised.listeners": "PLAINTEXT://%s:%d" % (host, port),
                "inter.broker.listener.name": "PLAINTEXT",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs": os.path.join(d, "data"),
                "auto.create.topics.enable": "false",
                "group.initial.rebalance.delay.ms": "0",
            }
            conf = os.path.join(d, "server.properties")
            with open(conf, "w") as f:
                f.writelines("%s=%s\n" % kv for kv in props.items())
            java = ["java", "-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-Djdk.net.hosts.file=" + hosts_file, "-cp", jar]
            log = os.path.join(work, "logs", "kafka-%d.log" % i)
            self.logs.append(log)
            formats.append((subprocess.Popen(java + ["kafka.tools.StorageTool", "format", "--cluster-id=" + cluster_id, "-c", conf],
                                             stdout=open(log, "w"), stderr=subprocess.STDOUT), ns, java, conf, log))
        for fmt, ns, java, conf, log in formats:
            if fmt.wait() != 0:
                raise Failure("kafka storage format failed:\n" + tail(log))
            self.procs.append(subprocess.Popen(["ip", "netns", "exec", ns] + java + ["kafka.Kafka", conf],
                                               stdout=open(log, "a"), stderr=subprocess.STDOUT))

    def ready(self):
        return all(wait_port(ip, port, 90, proc) for (ip, port), proc in zip(self.addresses, self.procs))

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait()


# ---------------------------------------------------------------------------------------------
# Kubernetes objects and pods

def suffix(n, alphabet="bcdfghjklmnpqrstvwxz2456789"):
    return "".join(random.choice(alphabet) for _ in range(n))


def labels_match(selector, labels):
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def env_name(service):
    return service.upper().replace("-", "_")


class Store:
    """The API server's objects, by (kind, namespace, name)."""

    def __init__(self):
        self.objects = {}
        self.service_ips = {}

    def add(self, obj, namespace):
        ns = obj["metadata"].get("namespace", namespace)
        obj["metadata"]["namespace"] = ns
        self.objects[(obj["kind"], ns, obj["metadata"]["name"])] = obj
        if obj["kind"] == "Service" and obj["spec"].get("clusterIP") != "None":
            self.service_ips[(ns, obj["metadata"]["name"])] = "%s.%d" % (SERVICE_NETWORK, len(self.service_ips) + 2)

    def get(self, kind, ns, name):
        return self.objects.get((kind, ns, name))

    def data(self, kind, ns, name):
        """A ConfigMap's or Secret's data as bytes; None when the object does not exist."""
        obj = self.get(kind, ns, name)
        if obj is None:
            return None
        out = {}
        if kind == "Secret":
            out.update({k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()})
            out.update({k: v.encode() for k, v in (obj.get("stringData") or {}).items()})
        else:
            out.update({k: v.encode() for k, v in (obj.get("data") or {}).items()})
            out.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
        return out

    def service_links(self, ns):
        """The variables a kubelet sets for the Services that exist when the pod starts (enableServiceLinks)."""
        env = {}
        for (sns, name), ip in sorted(self.service_ips.items()):
            if sns != ns:
                continue
            svc = self.get("Service", sns, name)
            ports = svc["spec"].get("ports", [])
            if not ports:
                continue
            prefix = env_name(name)
            env[prefix + "_SERVICE_HOST"] = ip
            env[prefix + "_SERVICE_PORT"] = str(ports[0]["port"])
            for p in ports:
                proto = p.get("protocol", "TCP")
                if p.get("name"):
                    env[prefix + "_SERVICE_PORT_" + env_name(p["name"])] = str(p["port"])
                base = "%s_PORT_%d_%s" % (prefix, p["port"], proto)
                env[base] = "%s://%s:%d" % (proto.lower(), ip, p["port"])
                env[base + "_PROTO"] = proto.lower()
                env[base + "_PORT"] = str(p["port"])
                env[base + "_ADDR"] = ip
            env[prefix + "_PORT"] = "%s://%s:%d" % (ports[0].get("protocol", "TCP").lower(), ip, ports[0]["port"])
        return env


KUBERNETES_SERVICE = {  # the API server's Service, in every pod of every namespace
    "KUBERNETES_SERVICE_HOST": SERVICE_NETWORK + ".1", "KUBERNETES_SERVICE_PORT": "443",
    "KUBERNETES_SERVICE_PORT_HTTPS": "443", "KUBERNETES_PORT": "tcp://%s.1:443" % SERVICE_NETWORK,
    "KUBERNETES_PORT_443_TCP": "tcp://%s.1:443" % SERVICE_NETWORK, "KUBERNETES_PORT_443_TCP_PROTO": "tcp",
    "KUBERNETES_PORT_443_TCP_PORT": "443", "KUBERNETES_PORT_443_TCP_ADDR": SERVICE_NETWORK + ".1"}


def expand(text, env):
    """Kubernetes' $(VAR) expansion: defined names are replaced, $$ escapes, anything else stays."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)",
                  lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), m.group(0)), text)


def mode_of(value, default):
    return int(value) if value is not None else default


class Pod:
    def __init__(self, run, template, name, owner):
        self.run = run
        self.template = template
        self.name = name
        self.owner = owner
        self.labels = template["metadata"].get("labels", {})
        self.spec = template["spec"]
        if len(self.spec["containers"]) != 1:
            raise Failure("%s: the run handles pods of one container" % name)
        self.container = self.spec["containers"][0]
        self.ns_name, self.ip = run.net.host(name)
        self.dir = os.path.join(run.work, "pods", name)
        self.log = os.path.join(run.work, "logs", name + ".log")
        self.proc = None
        self.init_pid = None
        self.ready = False

    # -- what the kubelet prepares
    def prepare(self, hosts_text):
        d = self.dir
        for sub in ("upper", "overlaywork", "root", "volumes"):
            os.makedirs(os.path.join(d, sub))
        pod_sc = self.spec.get("securityContext") or {}
        sc = self.container.get("securityContext") or {}
        image_user = self.run.image_config.get("User", "")
        uid = sc.get("runAsUser", pod_sc.get("runAsUser"))
        gid = sc.get("runAsGroup", pod_sc.get("runAsGroup"))
        iu, _, ig = image_user.partition(":")
        if uid is None:
            uid = int(iu) if iu.isdigit() else 0
        if gid is None:
            gid = int(ig) if ig.isdigit() else 0
        if sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) and uid == 0:
            raise Failure("%s: runAsNonRoot is set and the container would run as root" % self.name)
        fs_group = pod_sc.get("fsGroup")
        groups = sorted({gid, *(pod_sc.get("supplementalGroups") or []), *([fs_group] if fs_group is not None else [])})
        volumes = {v["name"]: v for v in self.spec.get("volumes", [])}
        mounts = []
        for vm in self.container.get("volumeMounts", []):
            vol = volumes[vm["name"]]
            source = self.volume(vol, fs_group)
            is_file = False
            if vm.get("subPath"):
                source = os.path.realpath(os.path.join(source, vm["subPath"]))
                is_file = os.path.isfile(source)
            mounts.append({"source": source, "target": vm["mountPath"], "file": is_file,
                           "readonly": bool(vm.get("readOnly")), "tmpfs": False})
        # the files a kubelet manages in every container
        with open(os.path.join(d, "hosts"), "w") as f:
            f.write(hosts_text.replace("@POD@", "%s\t%s" % (self.ip, self.name)))
        with open(os.path.join(d, "hostname"), "w") as f:
            f.write(self.name + "\n")
        # /etc/hosts stands in for cluster DNS, which answers a headless Service's name with every pod's
        # address; glibc reads every line of a name from /etc/hosts only with "multi on"
        with open(os.path.join(d, "host.conf"), "w") as f:
            f.write("multi on\n")
        for f in ("hosts", "hostname", "host.conf"):
            mounts.append({"source": os.path.join(d, f), "target": "/etc/" + f, "file": True,
                           "readonly": False, "tmpfs": False})
        self.env = self.environment()
        command = self.container.get("command") or self.run.image_config.get("Entrypoint") or []
        args = self.container.get("args") if self.container.get("args") is not None else (
            self.run.image_config.get("Cmd") or [] if not self.container.get("command") else [])
        argv = [expand(a, self.env) for a in command + args]
        self.exec_spec = {
            "root": os.path.join(d, "root"), "image": self.run.image_root, "upper": os.path.join(d, "upper"),
            "overlaywork": os.path.join(d, "overlaywork"), "mounts": mounts, "hostname": self.name[:63],
            "readOnlyRoot": bool(sc.get("readOnlyRootFilesystem")), "uid": uid, "gid": gid, "groups": groups,
            "noNewPrivs": sc.get("allowPrivilegeEscalation") is False,
            "workdir": self.container.get("workingDir") or self.run.image_config.get("WorkingDir") or "/",
            "argv": argv, "env": self.env}
        self.spec_file = os.path.join(d, "spec.json")
        with open(self.spec_file, "w") as f:
            json.dump(self.exec_spec, f)

    def volume(self, vol, fs_group):
        """Writes a volume's files as the kubelet does; returns the folder to mount."""
        path = os.path.join(self.dir, "volumes", vol["name"])
        if "emptyDir" in vol:
            os.makedirs(path)
            os.chmod(path, 0o777)
            return path
        for kind, key, name_key in (("ConfigMap", "configMap", "name"), ("Secret", "secret", "secretName")):
            if key not in vol:
                continue
            src = vol[key]
            data = self.run.store.data(kind, self.run.namespace, src[name_key])
            if data is None:
                if src.get("optional"):
                    data = {}
                else:
                    raise Failure("%s: %s %s of volume %s does not exist (the kubelet would not start the pod)"
                                  % (self.name, kind, src[name_key], vol["name"]))
            default_mode = mode_of(src.get("defaultMode"), 0o644)
            if src.get("items"):
                files = []
                for item in src["items"]:
                    if item["key"] not in data:
                        if src.get("optional"):
                            continue
                        raise Failure("%s: %s %s has no key %s (volume %s)" % (self.name, kind, src[name_key],
                                                                                item["key"], vol["name"]))
                    files.append((item["path"], data[item["key"]], mode_of(item.get("mode"), default_mode)))
            else:
                files = [(k, v, default_mode) for k, v in data.items()]
            self.atomic_write(path, files, fs_group)
            return path
        raise Failure("%s: volume %s is of a kind the run does not handle: %s" % (self.name, vol["name"], sorted(vol)))

    @staticmethod
    def atomic_write(path, files, fs_group):
        """The kubelet's layout: the files in a timestamped folder, ..data linking to it, one link per top name."""
        stamp = "..%s" % datetime.datetime.utcnow().strftime("%Y_%m_%d_%H_%M_%S.%f")[:-3] + str(random.randint(100, 999))
        os.makedirs(os.path.join(path, stamp))
        tops = set()
        for rel, content, mode in files:
            target = os.path.join(path, stamp, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as f:
                f.write(content)
            # fsGroup: the group owns every file and may read it (the kubelet's SetVolumeOwnership, read-only)
            if fs_group is not None:
                os.chown(target, 0, fs_group)
                mode |= 0o440
            os.chmod(target, mode)
            tops.add(rel.split("/")[0])
        for dirpath, _, _ in os.walk(path):
            if fs_group is not None:
                os.chown(dirpath, 0, fs_group)
                os.chmod(dirpath, 0o2755)
            else:
                os.chmod(dirpath, 0o755)
        os.symlink(stamp, os.path.join(path, "..data"))
        for top in tops:
            os.symlink(os.path.join("..data", top), os.path.join(path, top))

    def environment(self):
        """The process environment: the image's, the Service links, HOSTNAME, then the container's own."""
        env = {}
        for kv in self.run.image_config.get("Env") or []:
            k, _, v = kv.partition("=")
            env[k] = v
        env.update(KUBERNETES_SERVICE)
        if self.spec.get("enableServiceLinks", True):
            env.update(self.run.store.service_links(self.run.namespace))
        env["HOSTNAME"] = self.name[:63]
        defined = {}
        for src in self.container.get("envFrom") or []:
            kind, ref = ("ConfigMap", src["configMapRef"]) if "configMapRef" in src else ("Secret", src["secretRef"])
            data = self.run.store.data(kind, self.run.namespace, ref["name"])
            if data is None and not ref.get("optional"):
                raise Failure("%s: envFrom %s %s does not exist" % (self.name, kind, ref["name"]))
            for k, v in (data or {}).items():
                defined[src.get("prefix", "") + k] = v.decode()
        for e in self.container.get("env") or []:
            if "valueFrom" not in e:
                # a reference reaches the variables defined before it in the list, and the Service links
                defined[e["name"]] = expand(e.get("value", ""), {**env, **defined})
                continue
            vf = e["valueFrom"]
            if "fieldRef" in vf:
                field = vf["fieldRef"]["fieldPath"]
                values = {"metadata.name": self.name, "metadata.namespace": self.run.namespace,
                          "status.podIP": self.ip, "status.podIPs": self.ip, "status.hostIP": self.run.node_ip,
                          "spec.nodeName": "node-1", "spec.serviceAccountName": self.spec.get("serviceAccountName", "default")}
                m = re.match(r"metadata\.labels\['(.+)'\]$", field)
                if m:
                    values[field] = self.labels.get(m.group(1), "")
                if field not in values:
                    raise Failure("%s: env %s reads field %s, which the run does not know" % (self.name, e["name"], field))
                defined[e["name"]] = values[field]
            elif "secretKeyRef" in vf or "configMapKeyRef" in vf:
                kind, ref = ("Secret", vf["secretKeyRef"]) if "secretKeyRef" in vf else ("ConfigMap", vf["configMapKeyRef"])
                data = self.run.store.data(kind, self.run.namespace, ref["name"]) or {}
                if ref["key"] not in data:
                    if ref.get("optional"):
                        continue
                    raise Failure("%s: env %s needs key %s of %s %s, which does not exist"
                                  % (self.name, e["name"], ref["key"], kind, ref["name"]))
                defined[e["name"]] = data[ref["key"]].decode()
            else:
                raise Failure("%s: env %s has a valueFrom the run does not handle: %s" % (self.name, e["name"], sorted(vf)))
        env.update(defined)
        return env

    # -- running
    def start(self):
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", self.ns_name, "unshare", "--fork", "--pid", "--mount", "--uts", "--ipc",
             "--propagation", "private", sys.executable, os.path.abspath(__file__), "pod-init", self.spec_file],
            stdout=open(self.log, "ab"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.started = time.time()

    def pid1(self):
        """The container's process (PID 1 of the pod's PID namespace), as this machine numbers it."""
        if self.init_pid:
            return self.init_pid
        try:
            with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
                kids = f.read().split()
        except OSError:
            return None
        if kids:
            self.init_pid = int(kids[0])
        return self.init_pid

    def exec(self, argv, timeout=120):
        """kubectl exec: a process in the container's namespaces, root, user and environment."""
        pid = None
        deadline = time.time() + 10
        while pid is None and time.time() < deadline:
            pid = self.pid1()
            time.sleep(0.1)
        if pid is None:
            raise Failure("%s has no running container to exec into" % self.name)
        spec_file = os.path.join(self.dir, "exec.json")
        with open(spec_file, "w") as f:
            json.dump(self.exec_spec, f)
        return subprocess.run(["nsenter", "-t", str(pid), "-m", "-u", "-i", "-n", "-p", "--",
                               sys.executable, os.path.abspath(__file__), "pod-exec", spec_file, "--"] + argv,
                              capture_output=True, text=True, timeout=timeout)

    def stop(self, grace):
        """Like a kubelet: SIGTERM to the container's process, SIGKILL after the grace period."""
        if self.proc is None or self.proc.poll() is not None:
            return
        pid = self.pid1()
        if pid:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.proc.wait(10)

    # -- probes
    def probe(self, probe):
        if "httpGet" not in probe:
            raise Failure("%s: only httpGet probes are handled, not %s" % (self.name, sorted(probe)))
        g = probe["httpGet"]
        port = g["port"]
        if isinstance(port, str) and not port.isdigit():
            port = next(p["containerPort"] for p in self.container.get("ports", []) if p.get("name") == port)
        try:
            c = http.client.HTTPConnection(self.ip, int(port), timeout=probe.get("timeoutSeconds", 1))
            c.request("GET", g.get("path", "/"), headers={h["name"]: h["value"] for h in g.get("httpHeaders", [])})
            status = c.getresponse().status
            c.close()
            return 200 <= status < 400, "HTTP %d" % status
        except OSError as e:
            return False, str(e)

    def wait_probe(self, kind, deadline):
        probe = self.container.get(kind)
        while True:
            ok, why = self.probe(probe)
            if ok or time.time() > deadline or self.proc.poll() is not None:
                return ok, why
            time.sleep(0.5)

    def cpu_seconds(self):
        """CPU time the container's process has used so far."""
        try:
            with open("/proc/%d/stat" % self.pid1()) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, TypeError):
            return float("nan")

    def describe_probe(self, kind):
        g = self.container[kind]["httpGet"]
        return "GET %s on port %s" % (g.get("path", "/"), g["port"])


# ---------------------------------------------------------------------------------------------
# kubectl port-forward: a local port whose connections are opened inside the pod's network namespace

class PortForward:
    def __init__(self, pod, local_port, pod_port, node_ns):
        self.pod, self.pod_port, self.node_ns = pod, pod_port, node_ns
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", local_port))
        self.server.listen(16)
        self.closed = False
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while not self.closed:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self.pump, args=(client,), daemon=True).start()

    def pump(self, client):
        setns("/run/netns/" + self.pod.ns_name)
        try:
            upstream = socket.create_connection(("127.0.0.1", self.pod_port), timeout=10)
        except OSError:
            client.close()
            return
        finally:
            setns("/run/netns/" + self.node_ns)
        pair = {client: upstream, upstream: client}
        try:
            while True:
                readable, _, _ = select.select(list(pair), [], [], 60)
                if not readable:
                    break
                for s in readable:
                    data = s.recv(65536)
                    if not data:
                        raise EOFError
                    pair[s].sendall(data)
        except (OSError, EOFError):
            pass
        finally:
            client.close()
            upstream.close()

    def close(self):
        self.closed = True
        self.server.close()


# ---------------------------------------------------------------------------------------------
# An MCP client: initialize, then tools/call

def mcp_post(url, token, message, session=None):
    u = urllib.parse.urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=30)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "Authorization": "Bearer " + token}
    if session:
        headers["Mcp-Session-Id"] = session
        headers["MCP-Protocol-Version"] = PROTOCOL
    c.request("POST", u.path, body=json.dumps(message), headers=headers)
    r = c.getresponse()
    body = r.read().decode()
    c.close()
    if r.getheader("Content-Type", "").startswith("text/event-stream"):
        # the response is the data of the event that answers the request
        events = [json.loads(line[5:]) for line in body.splitlines() if line.startswith("data:") and line[5:].strip()]
        answer = [e for e in events if e.get("id") == message.get("id")]
        return r.status, r.getheader("Mcp-Session-Id"), answer[0] if answer else None
    return r.status, r.getheader("Mcp-Session-Id"), json.loads(body) if body.strip() else None


def mcp_status(url, token):
    """initialize, notifications/initialized and tools/call status; returns the call's result or raises."""
    status, session, init = mcp_post(url, token, {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "chart-run", "version": "1"}}})
    if status != 200 or not init or "result" not in init:
        raise RuntimeError("initialize: HTTP %s %s" % (status, init))
    status, _, _ = mcp_post(url, token, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    if status != 202:
        raise RuntimeError("notifications/initialized: HTTP %s" % status)
    status, _, call = mcp_post(url, token, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                            "params": {"name": "status", "arguments": {}}}, session)
    if status != 200 or not call or "result" not in call:
        raise RuntimeError("tools/call status: HTTP %s %s" % (status, call))
    result = call["result"]
    if result.get("isError"):
        raise RuntimeError("status answered an error: %s" % json.dumps(result.get("structuredContent")))
    return result["structuredContent"]


# ---------------------------------------------------------------------------------------------
# The run

class Run:
    def __init__(self, args):
        self.args = args
        self.checks = Checks()
        self.work = tempfile.mkdtemp(prefix="tidemark-chart-run-")
        os.chmod(self.work, 0o755)
        os.makedirs(os.path.join(self.work, "logs"))
        self.net = None
        self.pods = []
        self.servers = []
        self.forward = None
        self.store = Store()
        self.own_netns = os.open("/proc/self/ns/net", os.O_RDONLY)

    def check(self, sentence, ok, detail=""):
        return self.checks.record(sentence, ok, detail)

    def main(self):
        started = time.time()
        try:
            self.steps()
        except Failure as e:
            self.check("the run reached its end", False, str(e))
        finally:
            if self.args.hold:
                log("holding for %d s before the cleanup" % self.args.hold)
                time.sleep(self.args.hold)
            left = self.cleanup()
            self.check("every process of the run ended and every namespace it made is gone", not left, "\n".join(left))
        log("wall time %.0f s" % (time.time() - started))
        print("%d passed, %d failed" % (self.checks.passed, self.checks.failed), flush=True)
        return 0 if self.checks.failed == 0 else 1

    # -- the steps, in the operator's order
    def steps(self):
        a = self.args
        files, commands = read_guide(a.guide)
        folder = os.path.join(self.work, "operator")
        os.makedirs(folder)
        for name, text in files.items():
            with open(os.path.join(folder, name), "w") as f:
                f.write(text)
        os.symlink(os.path.join(a.root, "helm"), os.path.join(folder, "helm"))
        install = next((c for c in commands if c[:2] == ["helm", "install"] and ("-f" in c or "--values" in c)), None)
        if not self.check("the guide's Install section has a helm install command with a values file", install is not None):
            raise Failure("nothing to render")
        values_file = option(install, "-f", "--values")
        values = yaml_load(open(os.path.join(folder, values_file)).read()) or {}
        self.namespace = option(install, "--namespace", "-n") or "default"
        release = install[2]
        secrets_made = []
        for c in commands:
            if c[:4] == ["kubectl", "create", "secret", "generic"]:
                kubectl_secret(c, self.store.objects)
                secrets_made.append(c[4])
        log("the guide creates the Secrets %s and installs with %s" % (", ".join(secrets_made), values_file))

        # helm template, as the guide's helm install renders it
        rendered = subprocess.run([a.helm, "template"] + install[2:], cwd=folder, capture_output=True, text=True)
        if not self.check("the guide's '%s' renders with helm template" % " ".join(install), rendered.returncode == 0,
                          rendered.stderr):
            raise Failure("the chart did not render")
        notes = subprocess.run(["bash", os.path.join(a.root, "helm", "notes.sh"), a.helm] + install[3:4] + [release]
                               + install[4:], cwd=folder, capture_output=True, text=True)
        if not self.check("the release's NOTES.txt renders", notes.returncode == 0, notes.stderr):
            raise Failure("no notes")
        docs = [d for d in yaml_load_all(rendered.stdout) if d]
        hooks = sorted((d for d in docs if "pre-install" in d["metadata"].get("annotations", {}).get("helm.sh/hook", "")),
                       key=lambda d: int(d["metadata"]["annotations"].get("helm.sh/hook-weight", "0")))
        resources = [d for d in docs if d not in hooks]

        # the operator's PostgreSQL and Kafka, under the names the values give them
        remove_orphans()
        self.net = Network("tmc%d-" % os.getpid())
        node_ns, self.node_ip = self.net.host("node")
        setns("/run/netns/" + node_ns)
        self.node_ns = node_ns
        db_url = urllib.parse.urlsplit(values["database"]["url"])
        pg = Postgres(self.work, a.jar, self.net, db_url.hostname, db_url.port or 5432)
        self.servers.append(pg)
        bootstrap = values["kafka"]["bootstrapServers"].split(",")
        kafka = Kafka(self.work, a.jar, self.net, bootstrap)
        self.servers.append(kafka)
        self.unpack_image()
        if not self.check("PostgreSQL answers at %s:%d" % (db_url.hostname, pg.port), pg.ready(), tail(pg.log)):
            raise Failure("no PostgreSQL")
        self.dbname = db_url.path.lstrip("/")
        self.database_setup(pg, values, self.dbname)
        if not self.check("Kafka's %d brokers answer at %s" % (len(bootstrap), ", ".join(bootstrap)), kafka.ready(),
                          "\n".join(tail(l, 10) for l in kafka.logs)):
            raise Failure("no Kafka")

        # helm install: the hooks first (the migration Job), then the release's objects
        for obj in hooks:
            if obj["kind"] == "Job":
                self.run_job(obj)
            else:
                self.store.add(obj, self.namespace)
        for obj in resources:
            self.store.add(obj, self.namespace)
        self.start_deployments()
        self.wait_probes()
        self.follow_notes(notes.stdout)

    def unpack_image(self):
        oci = os.path.join(self.work, "oci")
        os.makedirs(oci)
        subprocess.run(["tar", "-xf", self.args.image, "-C", oci], check=True)
        blob = lambda d: os.path.join(oci, "blobs", *d.split(":"))
        index = json.load(open(os.path.join(oci, "index.json")))
        manifest = json.load(open(blob(index["manifests"][0]["digest"])))
        self.image_config = json.load(open(blob(manifest["config"]["digest"])))["config"]
        self.image_root = os.path.join(self.work, "image")
        os.makedirs(self.image_root)
        for layer in manifest["layers"]:
            flag = "-xzf" if layer["mediaType"].endswith("gzip") else "-xf"
            subprocess.run(["tar", flag, blob(layer["digest"]), "-C", self.image_root, "--numeric-owner",
                            "--warning=no-unknown-keyword"], check=True)
        shutil.rmtree(oci)

    def database_setup(self, pg, values, dbname):
        """What docs/security.md has the operator run: Tidemark's login, the caller logins, a served table."""
        db = values["database"]
        user = db.get("user", "tidemark")
        password = self.store.data("Secret", self.namespace, db["existingSecret"])[db.get("existingSecretPasswordKey", "password")]
        callers = self.store.data("Secret", self.namespace, db["callerPasswordsSecret"]) or {}
        sql = ["CREATE ROLE %s LOGIN CREATEROLE REPLICATION PASSWORD %s;" % (ident(user), literal(password.decode())),
               "CREATE DATABASE %s;" % ident(dbname),
               "GRANT CREATE ON DATABASE %s TO %s;" % (ident(dbname), ident(user))]
        for role, pw in sorted(callers.items()):
            sql.append("CREATE ROLE %s LOGIN PASSWORD %s NOSUPERUSER NOCREATEROLE NOREPLICATION NOBYPASSRLS;"
                       % (ident(role), literal(pw.decode())))
        r = pg.sql("postgres", "\n".join(sql))
        readers = [r for r in callers if "writer" not in r]
        table = ["CREATE TABLE public.notes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text NOT NULL);",
                 "ALTER TABLE public.notes OWNER TO %s;" % ident(user),
                 "INSERT INTO public.notes (body) VALUES ('the chart, run');"]
        for role in sorted(callers):
            table.append("GRANT USAGE ON SCHEMA public TO %s;" % ident(role))
            table.append(("GRANT SELECT ON public.notes TO %s;" if role in readers else
                          "GRANT SELECT, INSERT, UPDATE, DELETE ON public.notes TO %s;") % ident(role))
        r2 = pg.sql(dbname, "\n".join(table)) if r.returncode == 0 else r
        if not self.check("PostgreSQL has the roles of the guide's Secrets (%s and %s) and a table %s owns"
                          % (user, ", ".join(sorted(callers)), user), r.returncode == 0 and r2.returncode == 0,
                          r.stderr + r2.stderr):
            raise Failure("the database is not set up")

    def hosts_file(self):
        """/etc/hosts of every pod: the kubelet's lines, then the names cluster DNS would answer."""
        lines = ["# Kubernetes-managed hosts file.", "127.0.0.1\tlocalhost",
                 "::1\tlocalhost ip6-localhost ip6-loopback", "fe00::0\tip6-localnet", "fe00::1\tip6-allnodes",
                 "fe00::2\tip6-allrouters", "@POD@", "# cluster DNS, as this run answers it"]
        for name, ip in self.net.hosts.items():
            if "." in name:  # the operator's servers, under the names the values give them
                lines.append("%s\t%s" % (ip, name))
        for (kind, ns, name), svc in sorted(self.store.objects.items()):
            if kind != "Service" or svc["spec"].get("clusterIP") != "None":
                continue
            names = "%s.%s.svc.%s %s.%s.svc %s.%s" % (name, ns, CLUSTER_DOMAIN, name, ns, name, ns)
            if ns == self.namespace:
                names += " " + name
            for pod in self.pods:
                if labels_match(svc["spec"].get("selector"), pod.labels):
                    lines.append("%s\t%s" % (pod.ip, names))
        return "\n".join(lines) + "\n"

    def run_job(self, job):
        name = job["metadata"]["name"]
        spec = job["spec"]
        attempts = spec.get("backoffLimit", 6) + 1
        deadline = time.time() + spec.get("activeDeadlineSeconds", 600)
        results = []
        for attempt in range(attempts):
            pod = Pod(self, spec["template"], "%s-%s" % (name, suffix(5)), name)
            self.pods.append(pod)
            pod.prepare(self.hosts_file())
            pod.start()
            try:
                code = pod.proc.wait(max(1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                pod.stop(5)
                code = "past activeDeadlineSeconds"
            self.pods.remove(pod)
            results.append((pod, code))
            if code == 0:
                break
        last_pod, code = results[-1]
        report = "\n".join("%s: exit %s\n%s" % (p.name, c, tail(p.log)) for p, c in results)
        # as the Job controller does, a failed pod is retried up to backoffLimit times
        self.check("the %s Job's pod (%s) exits 0, within the Job's %d attempts"
                   % (name, " ".join(last_pod.exec_spec["argv"][-3:]), attempts), code == 0, report)
        if code != 0:
            raise Failure("the %s Job failed %d times" % (name, len(results)))
        if len(results) > 1:
            log("the %s Job took %d attempts:\n%s" % (name, len(results), report))
        log("%s: %s" % (last_pod.name, tail(last_pod.log, 3).strip().replace("\n", " | ")))

    def start_deployments(self):
        """Every Deployment's pods (an autoscaled one's at its HPA's minReplicas), in the order they start."""
        hpa = {}
        for (kind, ns, name), obj in self.store.objects.items():
            if kind == "HorizontalPodAutoscaler":
                hpa[obj["spec"]["scaleTargetRef"]["name"]] = obj["spec"].get("minReplicas", 1)
        deployments = [obj for (kind, _, _), obj in sorted(self.store.objects.items()) if kind == "Deployment"]
        by_deployment = []
        for d in deployments:
            name = d["metadata"]["name"]
            replicas = d["spec"].get("replicas", hpa.get(name, 1))
            template_hash = "".join(random.choice("0123456789abcdef") for _ in range(10))
            by_deployment.append([Pod(self, d["spec"]["template"], "%s-%s-%s" % (name, template_hash, suffix(5)), name)
                                  for _ in range(replicas)])
        for pods in by_deployment:
            self.pods += pods
        hosts = self.hosts_file()
        for pod in self.pods:
            pod.prepare(hosts)
        log("%d pods: %s" % (len(self.pods), ", ".join("%s (%s)" % (p.name, p.ip) for p in self.pods)))

    def wait_probes(self):
        """Starts the pods, at most --parallel at a time until their startup probes pass, and polls their probes.

        On a cluster each pod starts on a node with the CPU it requests; here all of them share this
        machine's cores, so starting them all at once would measure the machine, not the startup budget.
        """
        results = {}
        slots = threading.Semaphore(self.args.parallel)

        def watch(pod):
            c = pod.container
            startup = c.get("startupProbe")
            out = {}
            with slots:
                pod.start()
                budget = (startup.get("initialDelaySeconds", 0) + startup.get("periodSeconds", 10)
                          * startup.get("failureThreshold", 3)) if startup else 120
                out["startupProbe"] = pod.wait_probe("startupProbe", pod.started + budget) + (time.time() - pod.started,) \
                    if startup else (True, "none", 0)
                pod.started_cpu = pod.cpu_seconds()
            if out["startupProbe"][0]:
                out["livenessProbe"] = pod.wait_probe("livenessProbe", time.time()) + (time.time() - pod.started,)
                out["readinessProbe"] = pod.wait_probe("readinessProbe", pod.started + self.args.ready_seconds) \
                    + (time.time() - pod.started,)
                pod.ready = out["readinessProbe"][0]
                pod.ready_cpu = pod.cpu_seconds()
            results[pod.name] = out

        threads = []
        for p in self.pods:
            threads.append(threading.Thread(target=watch, args=(p,)))
            threads[-1].start()
            time.sleep(0.05)  # in order: a Deployment's pods take the slots together, as they start together
        for t in threads:
            t.join()
        for pod in self.pods:
            out = results[pod.name]
            for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
                if kind not in pod.container:
                    continue
                if kind not in out:
                    self.check("%s's %s (%s) passes" % (pod.name, kind, pod.describe_probe(kind)), False,
                               "not reached: the startup probe failed")
                    continue
                ok, why, seconds = out[kind]
                self.check("%s's %s (%s) passes, %.0f s after the start" % (pod.name, kind, pod.describe_probe(kind), seconds),
                           ok, "last answer: %s (the pod's process %s)\n%s"
                           % (why, "is running" if pod.proc.poll() is None else "exited %s" % pod.proc.returncode, tail(pod.log)))
        if not all(p.ready for p in self.pods):
            raise Failure("not every pod became ready")
        log("CPU time each pod used until its startup probe passed, and until it was ready: "
            + ", ".join("%s %.0f s, %.0f s" % (p.name, p.started_cpu, p.ready_cpu) for p in self.pods))

    def follow_notes(self, notes):
        """The NOTES' commands, in order, each as a kubectl against this run's objects would do it."""
        log("following the release's notes")
        role_keys, token, url = None, None, None
        for raw in notes.splitlines():
            line = raw.strip()
            m = re.search(r"connect an MCP client to (\S+)", line)
            if m:
                url = m.group(1)
            if not line.startswith("kubectl "):
                continue
            argv = shlex.split(line)
            verb = argv[1]
            if verb == "get" and argv[2] == "pods":
                log("kubectl get pods: %d of %d ready" % (sum(p.ready for p in self.pods), len(self.pods)))
            elif verb == "describe" and argv[2] == "secret":
                name = next(a for a in argv[3:] if not a.startswith("-") and a != option(argv, "-n", "--namespace"))
                data = self.store.data("Secret", option(argv, "-n", "--namespace"), name)
                if not self.check("the Secret %s that NOTES lists the caller roles from exists" % name, data is not None):
                    raise Failure("no Secret " + name)
                role_keys = sorted(data)
                log("kubectl describe secret %s: Data: %s" % (name, ", ".join("%s: %d bytes" % (k, len(data[k])) for k in role_keys)))
            elif verb == "exec":
                token = self.notes_exec(argv, role_keys)
            elif verb == "port-forward":
                self.notes_port_forward(argv)
        if not self.check("NOTES says to create a token and where to connect", token is not None and url is not None,
                          notes):
            return
        deadline = time.time() + 60
        error = None
        while time.time() < deadline:
            try:
                status = mcp_status(url, token)
                break
            except (OSError, RuntimeError, ValueError) as e:
                error = e
                time.sleep(1)
        else:
            self.check("an MCP initialize and tools/call status with that token succeed at %s" % url, False, error)
            return
        self.check("an MCP initialize and tools/call status with that token succeed at %s" % url, True)
        caller = status.get("caller", {})
        self.check("the call ran as the caller role %s, read-only, logged in with its own password"
                   % self.token_role, caller.get("role") == self.token_role and caller.get("access") == "read-only",
                   json.dumps(status))
        members = len(self.pods)
        self.check("status counts every pod of the release (%d) as one cluster" % members,
                   status.get("cluster", {}).get("size") == members, json.dumps(status.get("cluster")))
        self.check("status reaches Kafka through a changelog pod", (status.get("kafka") or {}).get("reachable") is True,
                   json.dumps(status.get("kafka")))
        changelog = [p for p in self.pods if p.labels.get("app.kubernetes.io/component") == "changelog"]
        r = self.servers[0].sql(self.dbname, "SELECT count(*) FILTER (WHERE active) || ' of ' || count(*)"
                                             " FROM pg_replication_slots WHERE slot_name LIKE 'tidemark%'")
        self.check("of the %d ready changelog pods one streams the replication slot and the others stand by"
                   % len(changelog), r.returncode == 0 and r.stdout.strip() == "1 of 1" and len(changelog) > 1
                   and all(p.ready for p in changelog), r.stdout + r.stderr)

    def notes_exec(self, argv, role_keys):
        ns = option(argv, "-n", "--namespace")
        target = next(a for a in argv[2:argv.index("--")] if a.startswith("deploy/"))[len("deploy/"):]
        command = argv[argv.index("--") + 1:]
        placeholders = [a for a in command if re.fullmatch(r"<[^>]+>", a)]
        for p in placeholders:
            if p != "<role>" or not role_keys:
                self.check("NOTES' exec command has only placeholders the notes explain", False, " ".join(argv))
                raise Failure("cannot fill " + p)
        # the operator picks one of the roles the notes had them list
        command = [role_keys[0] if a == "<role>" else a for a in command]
        self.token_role = command[command.index("--role") + 1]
        pod = next((p for p in self.pods if p.owner == target and p.ready), None)
        if not self.check("kubectl exec finds a ready pod of deploy/%s in namespace %s" % (target, ns),
                          pod is not None and ns == self.namespace):
            raise Failure("no pod to exec into")
        r = pod.exec(command)
        m = re.search(r"\btmk_[A-Za-z0-9]+", r.stdout)
        self.check("NOTES' '%s' prints a token in %s" % (" ".join(command[3:7]), pod.name),
                   r.returncode == 0 and m is not None, "exit %s\n%s%s" % (r.returncode, r.stdout, r.stderr))
        return m.group(0) if m else None

    def notes_port_forward(self, argv):
        ns = option(argv, "-n", "--namespace")
        target = next(a for a in argv[2:] if a.startswith("svc/"))[len("svc/"):]
        local, _, remote = next(a for a in argv[2:] if re.fullmatch(r"\d+:\d+", a)).partition(":")
        svc = self.store.get("Service", ns, target)
        if not self.check("kubectl port-forward finds the Service %s" % target, svc is not None):
            raise Failure("no Service " + target)
        port = next(p for p in svc["spec"]["ports"] if p["port"] == int(remote))
        pod = next(p for p in self.pods if p.ready and labels_match(svc["spec"]["selector"], p.labels))
        target_port = port.get("targetPort", port["port"])
        if isinstance(target_port, str):
            target_port = next(p["containerPort"] for p in pod.container["ports"] if p.get("name") == target_port)
        self.forward = PortForward(pod, int(local), int(target_port), self.node_ns)
        log("kubectl port-forward: 127.0.0.1:%s -> %s:%s (%s)" % (local, pod.name, target_port, pod.ip))

    def cleanup(self):
        left = []
        # back to the namespace the run started in, so that removing the node's leaves this process be
        if _libc.setns(self.own_netns, CLONE_NEWNET) != 0:
            left.append("could not leave the node's network namespace")
        if self.forward:
            self.forward.close()
        stoppers = [threading.Thread(target=p.stop, args=(15,)) for p in self.pods if p.proc]
        for t in stoppers:
            t.start()
        for t in stoppers:
            t.join()
        for s in reversed(self.servers):
            try:
                s.stop()
            except Exception as e:  # a server that failed to stop is still removed with its namespace
                left.append("stopping %s: %s" % (type(s).__name__, e))
        if self.net:
            deadline = time.time() + 10
            while self.net.pids() and time.time() < deadline:
                time.sleep(0.2)
            pids = self.net.pids()
            if pids:
                left.append("processes still running in the run's namespaces: %s" % pids)
            left += ["namespace not removed: " + ns for ns in self.net.remove()]
        if self.args.keep:
            log("kept " + self.work)
        else:
            shutil.rmtree(self.work, ignore_errors=True)
        return left


def yaml_load(text):
    import yaml
    return yaml.safe_load(text)


def yaml_load_all(text):
    import yaml
    return list(yaml.safe_load_all(text))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "pod-init":
        pod_init(sys.argv[2])
        return
    if len(sys.argv) > 3 and sys.argv[1] == "pod-exec":
        enter(json.load(open(sys.argv[2])), sys.argv[sys.argv.index("--") + 1:])
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", required=True, help="the repository")
    p.add_argument("--helm", required=True)
    p.add_argument("--image", required=True, help="the OCI image tarball")
    p.add_argument("--jar", required=True, help="tidemark.jar, whose PostgreSQL and Kafka the run starts")
    p.add_argument("--guide", required=True)
    p.add_argument("--ready-seconds", type=int, default=240, help="longest wait for a pod's readiness")
    p.add_argument("--parallel", type=int, default=os.cpu_count() or 2,
                   help="pods starting at once (default: one per core)")
    p.add_argument("--keep", action="store_true", help="keep the work folder and its logs")
    p.add_argument("--hold", type=int, default=0, help="seconds to leave everything running before the cleanup")
    run = Run(p.parse_args())
    def interrupted(signum, frame):
        raise KeyboardInterrupt()

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, interrupted)
    try:
        sys.exit(run.main())
    except KeyboardInterrupt:
        run.cleanup()
        sys.exit(130)


if __name__ == "__main__":
    main()
