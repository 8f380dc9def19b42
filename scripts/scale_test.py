#!/usr/bin/env python3
"""The multi-replica scenarios, against a cluster started by deploy/cluster.sh.

    usage: python3 scripts/scale_test.py   (run by scripts/scale-test.sh)

Reads the ports from `bash deploy/cluster.sh ports`, runs each scenario,
prints a line per scenario and ends with `scale-test: N passed, M failed`.
Python 3 standard library only.
"""

import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLUSTER = ["bash", os.path.join(ROOT, "deploy", "cluster.sh")]
VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
RUN_DIR = os.environ.get("MCP_DEPLOY_DIR", "/tmp/mcp-deploy")


def cluster(*args, timeout=120):
    out = subprocess.run(CLUSTER + list(args), capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError(f"cluster.sh {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


PORTS = dict(line.split("=", 1) for line in cluster("ports").split()) if not os.environ.get("MCP_SCALE_NO_CLUSTER") \
    else {"NGINX_PORT": "0"}
NGINX = int(PORTS["NGINX_PORT"])
REPLICAS = [int(PORTS[f"REPLICA_{i}_PORT"]) for i in range(1, 100) if f"REPLICA_{i}_PORT" in PORTS]


def meta(caps=None):
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps if caps is not None else {},
    }


CAPS = {"elicitation": {}, "extensions": {TASKS: {}}}
_ids = iter(range(1, 1 << 30))


def headers(method, name=None, extra=None):
    h = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": method,
    }
    if name is not None:
        h["Mcp-Name"] = name
    h.update(extra or {})
    return h


def read_sse(response):
    """Yields each event's JSON message from a text/event-stream response."""
    data = []
    while True:
        line = response.readline()
        if not line:
            return
        line = line.decode().rstrip("\r\n")
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif line == "" and data:
            yield json.loads("".join(data))
            data = []


def rpc(port, method, params, name=None, caps=None, timeout=15):
    """One 2026-07-28 request; returns the response message (JSON or the last SSE event)."""
    params = dict(params)
    params["_meta"] = meta(CAPS if caps is None else caps)
    body = json.dumps({"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", "/mcp", body, headers(method, name))
        r = conn.getresponse()
        if r.getheader("Content-Type", "").startswith("text/event-stream"):
            last = None
            for msg in read_sse(r):
                if "id" in msg and ("result" in msg or "error" in msg):
                    last = msg
                    break
            return last
        return json.loads(r.read() or b"null")
    finally:
        conn.close()


def result(msg):
    if not msg or "result" not in msg:
        raise AssertionError(f"not a result: {msg}")
    return msg["result"]


def task_get(port, task_id):
    return result(rpc(port, "tasks/get", {"taskId": task_id}, name=task_id))


def wait_status(port, task_id, wanted, within=15):
    deadline = time.time() + within
    while True:
        task = task_get(port, task_id)
        if task["status"] in wanted:
            return task
        if time.time() > deadline:
            raise AssertionError(f"task {task_id} still {task['status']}, wanted {wanted}")
        time.sleep(0.1)


class Listener:
    """A subscriptions/listen stream read on a thread; notifications land in a list."""

    def __init__(self, port, notifications):
        self.events = []
        self.cond = threading.Condition()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
        body = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "subscriptions/listen",
                           "params": {"notifications": notifications, "_meta": meta(CAPS)}})
        self.conn.request("POST", "/mcp", body, headers("subscriptions/listen"))
        self.response = self.conn.getresponse()
        assert self.response.status == 200, self.response.status
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        ack = self.wait(lambda m: m.get("method") == "notifications/subscriptions/acknowledged", 5)
        self.ack = ack

    def _read(self):
        try:
            for msg in read_sse(self.response):
                with self.cond:
                    self.events.append((time.perf_counter(), msg))
                    self.cond.notify_all()
        except Exception:  # the stream was closed
            pass

    def wait(self, match, within, after=0):
        deadline = time.time() + within
        with self.cond:
            while True:
                for i, (t, m) in enumerate(self.events[after:], start=after):
                    if match(m):
                        return t, m, i
                left = deadline - time.time()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def close(self):
        self.conn.close()


# ------------------------------------------------------------------ scenarios

def mrtr_across_replicas():
    """Round 1 answered by replica A, round 2 by replica B."""
    a, b = REPLICAS[0], REPLICAS[1]
    tool = "test_input_required_result_elicitation"
    r1 = result(rpc(a, "tools/call", {"name": tool, "arguments": {}}, name=tool))
    assert r1["resultType"] == "input_required", r1
    (key,) = r1["inputRequests"].keys()
    r2 = result(rpc(b, "tools/call", {
        "name": tool, "arguments": {}, "requestState": r1["requestState"],
        "inputResponses": {key: {"action": "accept", "content": {"name": "Ada"}}},
    }, name=tool))
    assert r2["resultType"] == "complete" and "Ada" in r2["content"][0]["text"], r2
    return "round 1 on replica 1, round 2 on replica 2: completed"


def notification_across_replicas():
    """A listen stream on A hears of a change made on B; latency over 50 changes."""
    a, b = REPLICAS[0], REPLICAS[1]
    uri = "test://watched-resource"
    listener = Listener(a, {"resourceSubscriptions": [uri]})
    latencies = []
    seen = 0
    try:
        for _ in range(50):
            t0 = time.perf_counter()
            rpc(b, "tools/call", {"name": "test_trigger_resource_update", "arguments": {}},
                name="test_trigger_resource_update")
            got = listener.wait(lambda m: m.get("method") == "notifications/resources/updated", 5, after=seen)
            assert got, "no notification on replica 1 within 5 s"
            t1, msg, index = got
            seen = index + 1
            assert msg["params"]["uri"] == uri, msg
            latencies.append((t1 - t0) * 1000)
    finally:
        listener.close()
    p50, p99 = percentiles(latencies)
    return f"50 changes on replica 2 heard on replica 1: p50 {p50:.1f} ms, p99 {p99:.1f} ms (call included)"


def task_everywhere():
    """A task created through nginx, polled on every replica, answered on one, cancelled on another."""
    created = result(rpc(NGINX, "tools/call", {"name": "confirm_delete", "arguments": {"filename": "a.txt"}},
                         name="confirm_delete"))
    assert created["resultType"] == "task", created
    tid = created["taskId"]
    views = [wait_status(p, tid, {"input_required"}) for p in REPLICAS]
    assert all(v["inputRequests"].keys() == views[0]["inputRequests"].keys() for v in views), views
    (key,) = views[0]["inputRequests"].keys()
    ack = result(rpc(REPLICAS[1], "tasks/update", {
        "taskId": tid, "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}}}, name=tid))
    assert ack["resultType"] == "complete", ack
    done = [wait_status(p, tid, {"completed"}) for p in REPLICAS]
    assert all(d["result"]["content"][0]["text"] == "Deleted a.txt" for d in done), done

    slow = result(rpc(NGINX, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}},
                      name="slow_compute"))["taskId"]
    assert all(task_get(p, slow)["status"] == "working" for p in REPLICAS)
    result(rpc(REPLICAS[2], "tasks/cancel", {"taskId": slow}, name=slow))
    states = [task_get(p, slow)["status"] for p in REPLICAS]
    assert states == ["cancelled"] * len(REPLICAS), states
    return f"created via nginx, seen on {len(REPLICAS)} replicas, answered on 2 -> completed; cancelled on 3 -> cancelled everywhere"


def rolling_restart():
    """Every replica restarted in turn while a load runs through nginx: no request fails."""
    stop = threading.Event()
    counts = {"ok": 0, "failed": 0}
    failures = []
    lock = threading.Lock()

    def load():
        n = 0
        while not stop.is_set():
            n += 1
            try:
                msg = rpc(NGINX, "tools/call", {"name": "greet", "arguments": {"name": f"n{n}"}}, name="greet",
                          timeout=30)
                ok = msg and msg.get("result", {}).get("content", [{}])[0].get("text") == f"Hello, n{n}!"
            except Exception as e:  # counted below
                ok, msg = False, repr(e)
            with lock:
                counts["ok" if ok else "failed"] += 1
                if not ok and len(failures) < 5:
                    failures.append(msg)

    threads = [threading.Thread(target=load, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(1)
    for i in range(1, len(REPLICAS) + 1):
        cluster("stop", str(i))
        cluster("start", str(i))
        time.sleep(1)
    stop.set()
    for t in threads:
        t.join(60)
    assert counts["failed"] == 0, f"{counts['failed']} of {counts['ok'] + counts['failed']} failed: {failures}"
    assert counts["ok"] > 100, counts
    return f"{counts['ok']} requests through nginx while {len(REPLICAS)} replicas restarted in turn, 0 failed"


def replica_and_redis_loss():
    """kill -9 of the replica running a task: failed within the lease, and a stream following it told.
    Redis restarted: streams live on."""
    victim = len(REPLICAS)
    tid = result(rpc(REPLICAS[victim - 1], "tools/call", {"name": "slow_compute", "arguments": {"seconds": 120}},
                     name="slow_compute"))["taskId"]
    assert task_get(REPLICAS[0], tid)["status"] == "working"
    # A stream on another replica follows the task: it hears of the failure too.
    follower = Listener(REPLICAS[1], {"taskIds": [tid]})
    t0 = time.time()
    cluster("kill", str(victim))
    failed = wait_status(REPLICAS[0], tid, {"failed"}, within=20)
    took = time.time() - t0
    assert failed["error"]["code"] == -32603, failed
    assert took <= 6 + 3, f"failed after {took:.1f} s (lease 6 s)"
    try:
        told = follower.wait(lambda m: m.get("method") == "notifications/tasks"
                             and m["params"].get("taskId") == tid and m["params"].get("status") == "failed", 5)
        assert told, f"the listen stream following the task was not told it failed: {follower.events}"
    finally:
        follower.close()
    cluster("start", str(victim))

    uri = "test://watched-resource"
    listener = Listener(REPLICAS[0], {"resourceSubscriptions": [uri]})
    try:
        before = len(listener.events)
        p1 = time.perf_counter()
        cluster("redis-restart")
        t1 = time.time()
        # Nothing is announced: once its subscriber is back, the replica tells the stream again of
        # what it follows, as changes made elsewhere meanwhile were not heard.
        made_up = listener.wait(lambda m: m.get("method") == "notifications/resources/updated"
                                and m["params"].get("uri") == uri, 30, after=before)
        assert made_up, f"the stream was not told again of its resource after the Redis restart: {listener.events}"
        resync = made_up[0] - p1
        before = made_up[2] + 1
        got = None
        while got is None and time.time() - t1 < 30:
            try:
                rpc(REPLICAS[1], "tools/call", {"name": "test_trigger_resource_update", "arguments": {}},
                    name="test_trigger_resource_update", timeout=5)
            except Exception:
                pass  # replica 2 may still be reconnecting
            got = listener.wait(lambda m: m.get("method") == "notifications/resources/updated", 1, after=before)
        assert got, "no notification within 30 s of the Redis restart"
        heal = time.time() - t1
        assert listener.thread.is_alive(), "the listen stream ended"
    finally:
        listener.close()
    # Replica 3 has not used the task store since Redis restarted: its first command meets the
    # dropped connection, and must still be answered (an unknown task), not fail.
    unknown = rpc(REPLICAS[victim - 1], "tasks/get", {"taskId": "0" * 32}, name="0" * 32)
    assert unknown.get("error", {}).get("code") == -32602, f"the first store read after the restart: {unknown}"
    return (f"killed replica {victim}: its task failed after {took:.1f} s (lease 6 s), a stream on replica 2 "
            f"following it told; Redis restarted: the same listen stream was told again of its resource "
            f"{resync:.1f} s after the restart began, and heard a new change {heal:.1f} s after it; "
            f"replica {victim}'s first store read after it answered")


def redis_outage_while_busy():
    """Redis away 3 s while a replica renews a running task's lease: the replica is served again
    within seconds of Redis being back (its reconnection does not back off for minutes)."""
    created = result(rpc(REPLICAS[0], "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}},
                         name="slow_compute"))
    assert created["resultType"] == "task", created
    cluster("redis-stop")
    time.sleep(3)  # the lease's renewals (every 2 s) meet the dropped connection meanwhile
    cluster("redis-start")
    t0, tries = time.time(), 0
    while True:
        tries += 1
        try:
            got = rpc(REPLICAS[0], "tasks/get", {"taskId": "0" * 32}, name="0" * 32, timeout=3)
        except Exception as e:  # noqa: BLE001 - a timeout while the replica waits for Redis
            got = {"exception": str(e)}
        if got.get("error", {}).get("code") == -32602:
            break
        assert time.time() - t0 < 15, f"replica 1 not served 15 s after Redis came back: {got}"
        time.sleep(0.2)
    healed = time.time() - t0
    again = result(rpc(REPLICAS[0], "tools/call", {"name": "slow_compute", "arguments": {"seconds": 1}},
                       name="slow_compute"))
    assert again["resultType"] == "task", again
    done = wait_status(REPLICAS[1], again["taskId"], {"completed"}, within=15)
    return (f"Redis away 3 s under a running task's lease renewals: replica 1's store answered again "
            f"{healed:.1f} s after Redis was back ({tries} tries); a new task then ran to {done['status']}")


def legacy_session_through_nginx():
    """A 2025-11-25 session with a server-to-client elicitation, all through nginx."""
    def post(body, session=None, stream=False):
        conn = http.client.HTTPConnection("127.0.0.1", NGINX, timeout=30)
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
             "MCP-Protocol-Version": "2025-11-25"}
        if session:
            h["Mcp-Session-Id"] = session
        conn.request("POST", "/mcp", json.dumps(body), h)
        r = conn.getresponse()
        return conn, r

    conn, r = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "scale-test", "version": "1"}}})
    session = r.getheader("Mcp-Session-Id")
    r.read()
    conn.close()
    assert session and session.startswith("r"), session
    conn, r = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    r.read()
    conn.close()
    conn, r = post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "test_input_required_result_elicitation", "arguments": {}}}, session)
    assert r.getheader("Content-Type", "").startswith("text/event-stream"), r.getheader("Content-Type")
    answer = None
    for msg in read_sse(r):
        if msg.get("method") == "elicitation/create":
            c2, r2 = post({"jsonrpc": "2.0", "id": msg["id"],
                           "result": {"action": "accept", "content": {"name": "Lin"}}}, session)
            assert r2.status in (200, 202), r2.status
            r2.read()
            c2.close()
        elif msg.get("id") == 2:
            answer = msg
            break
    conn.close()
    assert answer and "Lin" in answer["result"]["content"][0]["text"], answer
    return f"session {session[:3]}... opened, asked and answered through nginx"


def redis_cli(*args):
    out = subprocess.run(["redis-cli", "-p", PORTS["REDIS_PORT"], *args], capture_output=True, text=True, timeout=10)
    if out.returncode != 0:
        raise RuntimeError(f"redis-cli {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout.split()


def task_missing(port, task_id):
    msg = rpc(port, "tasks/get", {"taskId": task_id}, name=task_id)
    return msg is not None and msg.get("error", {}).get("code") == -32602


def two_servers_one_redis():
    """everything and after-sales, two replicas each, on one Redis: no event or task crosses between them."""
    cluster("neighbours", "after-sales", "2", timeout=900)
    try:
        ports = dict(line.split("=", 1) for line in cluster("ports").split())
        ev1, ev2 = REPLICAS[0], REPLICAS[1]
        as1, as2 = int(ports["NEIGHBOUR_1_PORT"]), int(ports["NEIGHBOUR_2_PORT"])
        # The logs are appended to across runs: only what this run wrote counts.
        log_paths = [os.path.join(RUN_DIR, f"neighbour{i}.log") for i in (1, 2)]
        log_starts = [os.path.getsize(p) if os.path.exists(p) else 0 for p in log_paths]
        names = {p: result(rpc(p, "server/discover", {}))["_meta"]["io.modelcontextprotocol/serverInfo"]["name"]
                 for p in (ev1, ev2, as1, as2)}
        assert names == {ev1: "everything", ev2: "everything", as1: "after-sales", as2: "after-sales"}, names

        # Events: everything's changes reach everything's other replica, and no after-sales stream.
        uri = "test://watched-resource"
        everything = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True,
                      "resourceSubscriptions": [uri]}
        heard_here = Listener(ev2, everything)
        heard_next_door = Listener(as1, everything)
        try:
            wanted = ["notifications/resources/updated", "notifications/tools/list_changed",
                      "notifications/prompts/list_changed"]
            for tool in ["test_trigger_resource_update", "test_trigger_tool_change", "test_trigger_tool_change",
                         "test_trigger_prompt_change", "test_trigger_prompt_change"]:
                result(rpc(ev1, "tools/call", {"name": tool, "arguments": {}}, name=tool))
            for method in wanted:
                assert heard_here.wait(lambda m: m.get("method") == method, 5), f"{method} did not reach replica 2"
            # A message of everything's namespace, and garbage, put on after-sales' own channel.
            receivers = redis_cli("PUBLISH", "after-sales:events", '{"ns":"everything","event":{"e":"tools"}}')
            assert receivers == ["2"], f"after-sales:events has {receivers} subscribers, not 2"
            redis_cli("PUBLISH", "after-sales:events", "garbage")
            # Published after all the rest on the same Redis: once replica 2 hears it, a crossing event
            # would have reached after-sales too.
            last = len(heard_here.events)
            result(rpc(ev1, "tools/call", {"name": "test_trigger_resource_update", "arguments": {}},
                       name="test_trigger_resource_update"))
            assert heard_here.wait(lambda m: m.get("method") == wanted[0], 5, after=last), "the last event was lost"
            time.sleep(0.5)
            crossed = [m for _, m in heard_next_door.events if m.get("method", "").startswith("notifications/")
                       and m.get("method") != "notifications/subscriptions/acknowledged"]
            assert not crossed, f"after-sales heard everything's events: {crossed}"
            events = len(heard_here.events) - 1
        finally:
            heard_here.close()
            heard_next_door.close()

        # Tasks: each server's task is seen on its own replicas and is unknown to the other server.
        ev_task = result(rpc(ev1, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}},
                             name="slow_compute"))["taskId"]
        as_task = result(rpc(as1, "tools/call", {"name": "after_sales_export", "arguments": {"month": "2026-11"}},
                             name="after_sales_export"))
        assert as_task["resultType"] == "task", as_task
        as_task = as_task["taskId"]
        try:
            assert task_get(ev2, ev_task)["status"] == "working"
            assert task_get(as2, as_task)["status"] == "working"
            assert task_missing(as1, ev_task) and task_missing(as2, ev_task), "after-sales found everything's task"
            assert task_missing(ev1, as_task) and task_missing(ev2, as_task), "everything found after-sales' task"
            follow = Listener(as2, {"taskIds": [ev_task, as_task]})
            try:
                agreed = follow.ack[1]["params"]["notifications"].get("taskIds", [])
            finally:
                follow.close()
            assert agreed == [as_task], f"after-sales agreed to follow {agreed}"
            keys = redis_cli("--scan")
            spaces = sorted({k.split(":", 1)[0] for k in keys})
            assert spaces == ["after-sales", "everything"], f"keys outside the two namespaces: {keys}"
            channels = sorted(redis_cli("PUBSUB", "CHANNELS"))
            assert channels == ["after-sales:events", "after-sales:tasks", "everything:events", "everything:tasks"], \
                channels
        finally:
            result(rpc(ev2, "tasks/cancel", {"taskId": ev_task}, name=ev_task))
            result(rpc(as2, "tasks/cancel", {"taskId": as_task}, name=as_task))
        logs = ""
        for path, start in zip(log_paths, log_starts):
            with open(path, errors="replace") as f:
                f.seek(start)
                logs += f.read()
        warning = 'ignored 1 message(s) on the bus since the last warning; the latest, on after-sales:events: ' \
                  'a message of namespace "everything"'
        assert logs.count(warning) == 2, "the after-sales replicas did not both warn of the foreign message"
    finally:
        cluster("neighbours-down")
    return (f"2 x everything + 2 x after-sales on one Redis: {events} events heard on everything's other replica, "
            f"0 on after-sales (nor a foreign and a garbage message put on its channel); each task unknown to the "
            f"other server; keys {spaces}, channels {channels}")


def gateway_replicas_announce_an_upstream_update_once():
    """Two gateway replicas on one Redis, both following everything's resource for their callers: each caller hears
    of an update once, not once per replica."""
    config = os.path.join(RUN_DIR, "gateway.json")
    with open(config, "w") as f:
        json.dump({"mcpServers": {"ev": {"url": f"http://127.0.0.1:{NGINX}/mcp"}}}, f)
    listeners = []
    try:
        cluster("neighbours", "gateway", "2", "--config", config, timeout=900)
        ports = dict(line.split("=", 1) for line in cluster("ports").split())
        g1, g2 = int(ports["NEIGHBOUR_1_PORT"]), int(ports["NEIGHBOUR_2_PORT"])
        # Each gateway serves the upstream's tools once it has reached it.
        deadline = time.time() + 30
        for port in (g1, g2):
            while True:
                tools = [t["name"] for t in result(rpc(port, "tools/list", {}))["tools"]]
                if "ev_test_trigger_resource_update" in tools:
                    break
                assert time.time() < deadline, f"gateway on {port} lists no upstream tool: {tools}"
                time.sleep(0.3)
        uri = "test://watched-resource"
        updated = lambda m: m.get("method") == "notifications/resources/updated" and m["params"]["uri"] == uri
        for port in (g1, g2):
            listeners.append(Listener(port, {"resourceSubscriptions": [uri]}))
        trigger = lambda: result(rpc(REPLICAS[0], "tools/call", {"name": "test_trigger_resource_update",
                                                                  "arguments": {}}, name="test_trigger_resource_update"))
        # Both gateways follow the URI upstream once each has heard of an update.
        deadline = time.time() + 20
        while not all(any(updated(m) for _, m in l.events) for l in listeners):
            assert time.time() < deadline, "a gateway's caller heard of no update in 20 s"
            trigger()
            time.sleep(0.5)
        time.sleep(1)
        heard = []
        for _ in range(5):
            marks = [len(l.events) for l in listeners]
            trigger()
            for l, mark in zip(listeners, marks):
                assert l.wait(updated, 5, after=mark), "an update was not heard"
            # Time for a second copy to come, if one would.
            time.sleep(0.7)
            heard.append([sum(1 for _, m in l.events[mark:] if updated(m)) for l, mark in zip(listeners, marks)])
        assert all(counts == [1, 1] for counts in heard), f"updates heard by each caller, per change: {heard}"
    finally:
        for l in listeners:
            l.close()
        cluster("neighbours-down")
        os.remove(config)
    return f"2 gateway replicas behind one Redis, each following everything's resource: 5 changes, each heard once " \
           f"by each replica's caller ({heard})"


def blocking_task_keeps_its_lease():
    """A task whose handler blocks its thread 7 s (longer than the 6 s lease), polled on another replica."""
    created = result(rpc(REPLICAS[0], "tools/call", {"name": "blocking_job", "arguments": {"seconds": 7}},
                         name="blocking_job"))
    assert created["resultType"] == "task", created
    tid = created["taskId"]
    seen, polls, t0 = set(), 0, time.time()
    while True:
        task = task_get(REPLICAS[1], tid)
        polls += 1
        seen.add(task["status"])
        assert task["status"] in ("working", "completed"), f"after {time.time() - t0:.1f} s: {task}"
        if task["status"] == "completed":
            break
        assert time.time() - t0 < 20, f"still {task['status']} after 20 s"
        time.sleep(0.25)
    assert task["result"]["content"][0]["text"] == "blocked for 7 s and finished", task
    return f"completed after {time.time() - t0:.1f} s, {polls} polls on replica 2 saw {sorted(seen)}"


def forged_task_event():
    """A task event put on the bus by someone else changes nothing a listener sees."""
    tid = result(rpc(REPLICAS[0], "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}},
                     name="slow_compute"))["taskId"]
    follow = Listener(REPLICAS[1], {"taskIds": [tid]})
    try:
        agreed = follow.ack[1]["params"]["notifications"].get("taskIds", [])
        assert agreed == [tid], agreed
        # The stream starts with the task as it is: working.
        assert follow.wait(lambda m: m.get("method") == "notifications/tasks", 5), "the task's state was not sent"
        first = [m for _, m in follow.events if m.get("method") == "notifications/tasks"]
        assert [m["params"]["status"] for m in first] == ["working"], first
        fake = {"taskId": tid, "status": "completed", "createdAt": "2026-01-01T00:00:00Z",
                "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttlMs": 1,
                "result": {"content": [{"type": "text", "text": "forged"}]}}
        forged = [json.dumps({"ns": "everything", "event": {"e": "task", "task": fake}}),
                  json.dumps({"ns": "everything", "event": {"e": "task", "id": tid, "version": 1 << 40}}),
                  json.dumps({"ns": "everything", "event": {"e": "task", "id": tid, "version": 0}})]
        for message in forged:
            receivers = redis_cli("PUBLISH", "everything:events", message)
            assert receivers != ["0"], "nobody subscribes to everything:events"
        time.sleep(1.5)
        heard = [m for _, m in follow.events if m.get("method") == "notifications/tasks"][len(first):]
        assert not heard, f"a forged event reached the listener: {heard}"
        assert task_get(REPLICAS[1], tid)["status"] == "working"
        result(rpc(REPLICAS[2], "tasks/cancel", {"taskId": tid}, name=tid))
        assert follow.wait(lambda m: m.get("method") == "notifications/tasks"
                           and m["params"]["status"] == "cancelled", 5), "the real change was not heard"
        heard = [m["params"]["status"] for _, m in follow.events if m.get("method") == "notifications/tasks"]
    finally:
        follow.close()
    return f"3 forged task events ignored; the real cancellation heard ({heard})"


def cluster_env(env, *args):
    """cluster.sh with more environment: a replica it starts inherits it."""
    out = subprocess.run(CLUSTER + list(args), capture_output=True, text=True, timeout=120,
                         env={**os.environ, **env})
    if out.returncode != 0:
        raise RuntimeError(f"cluster.sh {' '.join(args)}: {out.stderr.strip()}")


def restart_replicas(env):
    for i in range(1, len(REPLICAS) + 1):
        cluster("stop", str(i))
        cluster_env(env, "start", str(i))


def call_as(principal, timeout=10, tool="test_simple_text", refusals=None):
    """One tools/call of `tool` through nginx as `principal`: the HTTP status
    (the message of a 429 appended to `refusals`, when given)."""
    body = json.dumps({"jsonrpc": "2.0", "id": next(_ids), "method": "tools/call",
                       "params": {"name": tool, "arguments": {}, "_meta": meta({})}})
    conn = http.client.HTTPConnection("127.0.0.1", NGINX, timeout=timeout)
    try:
        conn.request("POST", "/mcp", body, headers("tools/call", tool, {"X-Principal": principal}))
        r = conn.getresponse()
        text = r.read()
        if r.status == 429:
            msg = json.loads(text)
            assert msg["error"]["data"]["retryAfterMs"] > 0, msg
            assert int(r.getheader("Retry-After")) >= 1, r.getheaders()
            if refusals is not None:
                refusals.append(msg["error"]["message"])
        return r.status
    finally:
        conn.close()


def offer(principal, per_second, seconds, statuses, threads=6):
    """Sends `per_second` calls a second as `principal` for `seconds`, on a schedule
    (each of `threads` threads sends its share at fixed times); returns the elapsed time."""
    interval = threads / per_second
    start = time.perf_counter() + 0.1
    lock = threading.Lock()

    def run(k):
        n = 0
        while True:
            at = start + k * interval / threads + n * interval
            if at >= start + seconds:
                return
            delay = at - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            try:
                status = call_as(principal)
            except Exception as e:  # noqa: BLE001 - a failed request is a result here
                status = f"{type(e).__name__}"
            with lock:
                statuses.append(status)
            n += 1

    pool = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(seconds + 60)
    return time.perf_counter() - start


def shared_rate_limit():
    """R calls/s per principal shared by 3 replicas through Redis: 3R/s offered admits R/s, 429 for
    the rest, another principal unaffected; Redis stopped: each replica limits alone, all keep serving."""
    rate, seconds = 10, 20
    env = {"MCP_RATE_LIMIT": f"{rate}/s burst 5", "MCP_PRINCIPAL_HEADER": "x-principal"}
    restart_replicas(env)
    try:
        alice, bob = [], []
        other = threading.Thread(target=offer, args=("bob", rate / 2, seconds, bob, 2))
        other.start()
        took = offer("alice", 3 * rate, seconds, alice)
        other.join(seconds + 60)
        admitted = alice.count(200)
        refused = alice.count(429)
        wrong = [s for s in alice + bob if s not in (200, 429)]
        assert not wrong, f"answers other than 200 and 429: {wrong[:10]}"
        admitted_rate = admitted / took
        assert abs(admitted_rate - rate) <= 0.1 * rate, \
            f"admitted {admitted} of {len(alice)} in {took:.1f} s: {admitted_rate:.2f}/s, limit {rate}/s"
        assert refused == len(alice) - admitted
        assert bob.count(200) == len(bob), f"bob was limited: {bob.count(429)} of {len(bob)} refused"
        shared = (f"offered {len(alice) / took:.1f}/s as alice for {took:.1f} s: admitted {admitted} "
                  f"({admitted_rate:.2f}/s against {rate}/s), {refused} answered 429; bob {len(bob)}/{len(bob)} admitted")

        # A tool's own rate (send_digest: 1/min) refuses a call after the
        # server's rate was spent for it: the server's call is given back in
        # Redis, so carol's refusals never use up her server-wide burst.
        refusals = []
        digests = [call_as("carol", tool="send_digest", refusals=refusals) for _ in range(12)]
        assert digests[0] == 200 and digests[1:] == [429] * 11, f"send_digest as carol: {digests}"
        spent = [m for m in refusals if "send_digest" not in m]
        assert not spent, f"refused by the server's rate, which the refused calls used up: {spent[:3]}"
        given_back = f"send_digest 12 times as carol: 1 admitted, 11 refused by its own rate, none by the server's"

        logs = [os.path.join(RUN_DIR, f"replica{i}.log") for i in range(1, len(REPLICAS) + 1)]
        # The logs are appended to across runs: count what is written from here on.
        offsets = [os.path.getsize(log) if os.path.exists(log) else 0 for log in logs]
        cluster("redis-stop")
        try:
            alone = []
            took = offer("alice", 3 * rate, 5, alone)
            wrong = [s for s in alone if s not in (200, 429)]
            assert not wrong, f"without Redis, answers other than 200 and 429: {wrong[:10]}"
            alone_rate = alone.count(200) / took
            assert alone_rate > 1.5 * rate, f"without Redis {alone_rate:.1f}/s admitted: not per replica"
            said = 0
            for log, offset in zip(logs, offsets):
                with open(log, errors="replace") as f:
                    f.seek(offset)
                    said += sum("each replica now limits on its own" in line for line in f)
            assert 1 <= said <= len(REPLICAS), f"the fallback was logged {said} times"
        finally:
            cluster("redis-start")
        degraded = (f"Redis stopped: {alone.count(200)} of {len(alone)} admitted in {took:.1f} s "
                    f"({alone_rate:.1f}/s, per replica), no other answer; said once per replica ({said} lines)")
    finally:
        restart_replicas({})
    return f"{shared}. {given_back}. {degraded}"


DESK_DIR = os.path.join(RUN_DIR, "desk")
DESK_ENV = {
    "MCP_DEPLOY_DIR": DESK_DIR,
    "MCP_DEPLOY_BASE_PORT": os.environ.get("MCP_DESK_BASE_PORT", "28500"),
    "MCP_DEPLOY_EXAMPLE": "after-sales",
    "MCP_DEPLOY_DATABASE": "postgres",
    # Behind nginx every request comes from its address: one caller, whose
    # 60 calls a minute (the desk's own limit) would stop the load.
    "MCP_RATE_LIMIT": "10000/s",
}


def desk_cluster(*args, timeout=120):
    """cluster.sh for the desk's own deployment: after-sales replicas on one PostgreSQL and one Redis."""
    out = subprocess.run(CLUSTER + list(args), capture_output=True, text=True, timeout=timeout,
                         env={**os.environ, **DESK_ENV})
    if out.returncode != 0:
        raise RuntimeError(f"cluster.sh {' '.join(args)} (desk): {out.stderr.strip()}")
    return out.stdout


def open_ticket(port, n, attempts=3):
    """Both rounds of after_sales_create_ticket through `port`, each retried as it was (at most
    `attempts` sends) when its answer is lost; returns (ticket id, retries)."""
    tool, args = "after_sales_create_ticket", {"order_id": "ORD-100" + str(1 + n % 3), "reason": f"load {n}"}
    answer = {"refund": {"action": "accept", "content": {"method": "store_credit"}}}
    retries = 0
    rounds = [{"name": tool, "arguments": args}, None]
    for i in range(2):
        for attempt in range(attempts):
            try:
                msg = rpc(port, "tools/call", rounds[i], name=tool, timeout=30)
                got = result(msg)
                break
            except Exception:  # noqa: BLE001 - sent again below, as a client would
                if attempt == attempts - 1:
                    raise
                retries += 1
                time.sleep(0.2)
        if i == 0:
            assert got["resultType"] == "input_required", got
            rounds[1] = {"name": tool, "arguments": args, "requestState": got["requestState"],
                         "inputResponses": answer}
    assert got["resultType"] == "complete" and not got.get("isError"), got
    return got["structuredContent"]["id"], retries


def after_sales_on_postgres():
    """3 after-sales replicas on one PostgreSQL and one Redis behind nginx: tickets opened through nginx under
    load while every replica restarts in turn are all visible on every replica, numbered apart, none lost."""
    desk_cluster("up", "3", timeout=900)
    try:
        ports = dict(line.split("=", 1) for line in desk_cluster("ports").split())
        nginx = int(ports["NGINX_PORT"])
        replicas = [int(ports[f"REPLICA_{i}_PORT"]) for i in (1, 2, 3)]
        url = ports["DATABASE_URL"]
        assert url.startswith("postgres://"), url
        stop = threading.Event()
        opened, failures, retried = [], [], [0]
        lock = threading.Lock()
        counter = iter(range(1 << 30))

        def load():
            while not stop.is_set():
                with lock:
                    n = next(counter)
                try:
                    ticket, retries = open_ticket(nginx, n)
                    with lock:
                        opened.append(ticket)
                        retried[0] += retries
                except Exception as e:  # noqa: BLE001 - counted below
                    with lock:
                        failures.append(repr(e))

        threads = [threading.Thread(target=load, daemon=True) for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(2)
        for i in (1, 2, 3):
            desk_cluster("stop", str(i))
            desk_cluster("start", str(i))
            time.sleep(1)
        stop.set()
        for t in threads:
            t.join(60)
        assert not failures, f"{len(failures)} tickets not opened: {failures[:5]}"
        assert len(opened) > 50, f"only {len(opened)} tickets opened"
        assert len(set(opened)) == len(opened), "a ticket number was given twice"
        for port in replicas:
            for ticket in opened:
                seen = result(rpc(port, "tools/call", {"name": "after_sales_query_ticket",
                                                       "arguments": {"ticket_id": ticket}},
                                  name="after_sales_query_ticket"))
                assert not seen.get("isError") and seen["structuredContent"]["id"] == ticket, seen
        psql = subprocess.run(["psql", url, "-tAc", "SELECT COUNT(*) FROM tickets"], capture_output=True,
                              text=True, timeout=30)
        stored = int(psql.stdout.strip())
        assert stored == len(opened) + 1, f"{stored} tickets stored, {len(opened)} opened + the sample one"

        # The export: a task created through nginx, followed on the other replicas through Redis,
        # its CSV read from PostgreSQL by a replica that did not write it.
        created = result(rpc(nginx, "tools/call", {"name": "after_sales_export", "arguments": {"month": "2026-11"}},
                             name="after_sales_export"))
        assert created["resultType"] == "task", created
        done = [wait_status(port, created["taskId"], {"completed"}) for port in replicas]
        link = done[0]["result"]["content"][0]
        assert link["uri"] == "exports://2026-11.csv", done[0]
        read = [result(rpc(port, "resources/read", {"uri": link["uri"]}, name=link["uri"])) for port in replicas]
        assert all("T-1,ORD-1002" in r["contents"][0]["text"] for r in read), read
    finally:
        desk_cluster("down")
    numbers = sorted(int(t[2:]) for t in opened)
    return (f"{len(opened)} tickets opened through nginx by 4 clients while 3 replicas restarted in turn: "
            f"{len(opened)} distinct numbers (T-{numbers[0]}..T-{numbers[-1]}), each read on all 3 replicas, "
            f"{stored} rows in PostgreSQL (with the sample), {retried[0]} rounds sent again, 0 failed; "
            f"the export task completed on every replica, its CSV read on each")


SCENARIOS = [mrtr_across_replicas, notification_across_replicas, task_everywhere, rolling_restart,
             replica_and_redis_loss, redis_outage_while_busy, legacy_session_through_nginx, two_servers_one_redis,
             gateway_replicas_announce_an_upstream_update_once, blocking_task_keeps_its_lease, forged_task_event,
             shared_rate_limit, after_sales_on_postgres]


def percentiles(values):
    values = sorted(values)
    return statistics.median(values), values[min(len(values) - 1, int(len(values) * 0.99))]


def measure_tasks(port, n=200):
    """Task create -> get latency on one server: `tools/call` that becomes a task, then `tasks/get`."""
    create, get = [], []
    for _ in range(n):
        t0 = time.perf_counter()
        tid = result(rpc(port, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 1}},
                         name="slow_compute"))["taskId"]
        t1 = time.perf_counter()
        task_get(port, tid)
        t2 = time.perf_counter()
        create.append((t1 - t0) * 1000)
        get.append((t2 - t1) * 1000)
        # Not timed: frees the caller's running-task slot.
        result(rpc(port, "tasks/cancel", {"taskId": tid}, name=tid))
    (c50, c99), (g50, g99) = percentiles(create), percentiles(get)
    print(f"tasks on :{port}: create p50 {c50:.2f} ms p99 {c99:.2f} ms; get p50 {g50:.2f} ms p99 {g99:.2f} ms ({n} each)")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "measure-tasks":
        measure_tasks(int(sys.argv[2]))
        return 0
    if len(sys.argv) == 2 and sys.argv[1] == "measure-notifications":
        print(notification_across_replicas())
        return 0
    # Names on the command line run only those scenarios (`rolling_restart rolling_restart` twice).
    chosen = [next(s for s in SCENARIOS if s.__name__ == n) for n in sys.argv[1:]] or SCENARIOS
    passed = failed = 0
    for scenario in chosen:
        t0 = time.time()
        try:
            what = scenario()
            passed += 1
            print(f"  PASS {scenario.__name__} ({time.time() - t0:.1f} s): {what}", flush=True)
        except Exception as e:
            failed += 1
            print(f"  FAIL {scenario.__name__} ({time.time() - t0:.1f} s): {e}", flush=True)
            traceback.print_exc(limit=3)
    print(f"scale-test: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
