"""JupyterHub configuration of the workshop room (scripts/room.sh runs the hub
with it; every value comes from the environment room.sh sets).

- one public port, ROOM_PORT, on ROOM_BIND_IP (default every interface), HTTPS
  when ROOM_TLS_CERT and ROOM_TLS_KEY are set
- the proxy's API on 127.0.0.1; the hub itself on the room network's gateway
  address only (participants' servers must call it; nothing else can reach it)
- RoomAuthenticator (room/roomauth.py): room code for a new name, personal code
  after; `instructor` is the admin with ROOM_ADMIN_CODE
- DockerSpawner: one container per participant from ROOM_IMAGE on an internal
  Docker network with inter-container traffic off, memory and CPU limits set
  by the engine, work in a named volume per participant
- jupyterhub-idle-culler stops servers idle for ROOM_IDLE_TIMEOUT seconds
- the room board (queuekit board, a managed service on the room network's
  gateway, ROOM_BOARD_PORT): participants' self-checks report to it with their
  server's own hub token; the instructor opens /services/board/ (hub OAuth)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from roomauth import RoomAuthenticator  # noqa: E402

c = get_config()  # noqa: F821  (JupyterHub's config loader defines it)
env = os.environ
state = env["ROOM_STATE"]

port = int(env.get("ROOM_PORT", "8900"))
scheme = "https" if env.get("ROOM_TLS_CERT") else "http"
c.JupyterHub.bind_url = f"{scheme}://{env.get('ROOM_BIND_IP', '0.0.0.0')}:{port}/"
if scheme == "https":
    c.JupyterHub.ssl_cert = env["ROOM_TLS_CERT"]
    c.JupyterHub.ssl_key = env["ROOM_TLS_KEY"]

c.JupyterHub.hub_ip = env["ROOM_HUB_IP"]
c.JupyterHub.hub_port = int(env["ROOM_HUB_PORT"])
c.JupyterHub.hub_connect_ip = env["ROOM_HUB_IP"]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env['ROOM_PROXY_API_PORT']}"
c.ConfigurableHTTPProxy.command = [env["ROOM_CHP"]]
c.ConfigurableHTTPProxy.pid_file = os.path.join(state, "proxy.pid")
c.ConfigurableHTTPProxy.debug = False

c.JupyterHub.db_url = "sqlite:///" + os.path.join(state, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(state, "cookie_secret")
c.JupyterHub.pid_file = os.path.join(state, "jupyterhub.pid")
# Ctrl-C/TERM stops every participant's server (their work stays in volumes);
# a hub that is killed leaves them running and finds them again at restart.
c.JupyterHub.cleanup_servers = True
c.JupyterHub.cleanup_proxy = True

c.JupyterHub.authenticator_class = RoomAuthenticator
c.RoomAuthenticator.room_code = env["ROOM_CODE"]
c.RoomAuthenticator.admin_code = env["ROOM_ADMIN_CODE"]
c.RoomAuthenticator.claims_file = os.path.join(state, "claims.json")
c.Authenticator.admin_users = {"instructor"}
c.Authenticator.allow_all = True
c.JupyterHub.admin_access = False  # the instructor manages servers, never enters them

c.JupyterHub.spawner_class = "dockerspawner.DockerSpawner"
workspace = "/home/workshop/workshop/workspace"
c.DockerSpawner.image = env.get("ROOM_IMAGE", "nightqueue-room:local")
c.DockerSpawner.allowed_images = [c.DockerSpawner.image]
c.DockerSpawner.network_name = env["ROOM_NETWORK"]
c.DockerSpawner.use_internal_ip = True
c.DockerSpawner.prefix = "nightqueue-room"
c.DockerSpawner.name_template = "{prefix}-{username}"
c.DockerSpawner.volumes = {"nightqueue-room-{username}": workspace}
c.DockerSpawner.notebook_dir = workspace
c.DockerSpawner.remove = True
c.DockerSpawner.mem_limit = env.get("ROOM_MEM_LIMIT", "2G")
c.DockerSpawner.cpu_limit = float(env.get("ROOM_CPU_LIMIT", "1"))
c.DockerSpawner.extra_host_config = {
    # no swap beyond the memory limit: a memory bomb is killed, not paged out
    "memswap_limit": env.get("ROOM_MEM_LIMIT", "2G"),
    "pids_limit": int(env.get("ROOM_PIDS_LIMIT", "1024")),
    "security_opt": ["no-new-privileges"],
    "cap_drop": ["ALL"],
    "init": True,
}
c.DockerSpawner.extra_create_kwargs = {"user": "1000:1000"}
# The self-checks (queuekit/lab) report to the board at this URL with the
# server's JUPYTERHUB_API_TOKEN; without it they report nothing.
board_url = f"http://{env['ROOM_HUB_IP']}:{int(env['ROOM_BOARD_PORT'])}"
c.DockerSpawner.environment = {"QUEUEKIT_BOARD_URL": board_url + "/services/board/"}
c.DockerSpawner.cmd = ["/home/workshop/workshop/scripts/room-server.sh"]
c.DockerSpawner.http_timeout = 300
c.DockerSpawner.start_timeout = 300
c.Spawner.default_url = "/lab"

idle = int(env.get("ROOM_IDLE_TIMEOUT", "3600"))
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={idle}", "--cull-every=60"],
        # room.sh finds what the hub started by this working directory
        "cwd": state,
    },
    {
        # the room board: history in ROOM_STATE/board.jsonl; the proxy routes
        # /services/board/ to it; admins only (it checks with the hub)
        "name": "board",
        "url": board_url,
        "command": [env["ROOM_QUEUEKIT"], "board", "--state", state,
                    "--notebooks", os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "notebooks"),
                    "--echarts", env.get("ROOM_ECHARTS", "")],
        "cwd": state,
        "oauth_no_confirm": True,
    },
]
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    },
    {
        # to list the room's participants (rows for those not yet reporting)
        "name": "board",
        "scopes": ["list:users", "read:users"],
        "services": ["board"],
    },
]
