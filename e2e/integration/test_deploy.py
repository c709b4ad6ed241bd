"""deploy/: the Dockerfile's package lists, the systemd unit (systemd-analyze verify), the example config."""
import os
import subprocess

from conftest import ATRIUM_BIN, ROOT


def test_deploy_check():
    r = subprocess.run(["bash", os.path.join(ROOT, "deploy", "check.sh")], cwd=ROOT, capture_output=True, text=True,
                       env={**os.environ, "ATRIUM_BIN": ATRIUM_BIN}, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


def test_cluster_deploy_files_describe_redis_and_three_reachable_nodes():
    """The cluster's compose file and Kubernetes manifests (docs/cluster.md): Redis, three nodes on one
    Redis URL with their own ids and UDP media ports, readiness on /readyz, and a drain grace."""
    import yaml
    compose = yaml.safe_load(open(os.path.join(ROOT, "deploy", "docker-compose.cluster.yml")))
    services = compose["services"]
    assert "redis" in services
    nodes = [s for name, s in services.items() if name.startswith("atrium-")]
    assert len(nodes) == 3
    assert len({n["environment"]["ATRIUM_NODE_ID"] for n in nodes}) == 3
    assert {n["environment"]["ATRIUM_REDIS"] for n in nodes} == {"redis://redis:6379"}
    udp = [n["environment"]["ATRIUM_UDP_PORT"] for n in nodes]
    assert len(set(udp)) == 3
    for n, port in zip(nodes, udp):
        assert f"{port}:{port}/udp" in n["ports"]
        assert "/readyz" in " ".join(n["healthcheck"]["test"])
    docs = list(yaml.safe_load_all(open(os.path.join(ROOT, "deploy", "kubernetes", "atrium.yaml"))))
    sts = next(d for d in docs if d["kind"] == "StatefulSet")
    pod = sts["spec"]["template"]["spec"]
    c = pod["containers"][0]
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["ATRIUM_REDIS"].startswith("redis://") and env["ATRIUM_NODE_ID"] == "$(POD_NAME)"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    media = next(p for p in c["ports"] if p["name"] == "media")
    assert media["protocol"] == "UDP" and media["hostPort"] == media["containerPort"]
    assert pod["terminationGracePeriodSeconds"] > 30
    redis = list(yaml.safe_load_all(open(os.path.join(ROOT, "deploy", "kubernetes", "redis.yaml"))))
    assert {d["kind"] for d in redis} == {"Deployment", "Service"}
