# JupyterHub for a VerbsLab classroom on one machine (Debian's `jupyterhub` 3.0 package,
# `configurable-http-proxy` 5.3.0 from npm): every learner gets their own VerbsLab server
# (`verbslab serve --jupyterhub`, its own backend process and data folder in its own home),
# and the instructor service at /services/instructor/ shows where everyone is.
#
#   jupyterhub -f app/classroom/jupyterhub_config.py      (or: npm run classroom)
#
# Everything site-specific comes from the environment, so the same file serves `npm run
# classroom`, the tests and a trainer's machine:
#
#   VERBSLAB_CLASSROOM_DIR        state: the Hub's database, cookie secret, learners' homes,
#                                 the instructor's database (default ~/.local/share/verbslab-classroom)
#   VERBSLAB_CLASSROOM_IP         where the Hub's proxy listens (default 127.0.0.1; 0.0.0.0 for a room)
#   VERBSLAB_CLASSROOM_PORT       the Hub's public port (default 8000)
#   VERBSLAB_CLASSROOM_HUB_PORT   the Hub's own port (default 8081); the proxy's API port is
#   VERBSLAB_CLASSROOM_PROXY_API_PORT (default 8001); the instructor service's
#   VERBSLAB_INSTRUCTOR_PORT      (default 10101)
#   VERBSLAB_CLASSROOM_LEARNERS   comma-separated user names (default alice,bob)
#   VERBSLAB_CLASSROOM_INSTRUCTORS the `instructors` group (default teacher)
#   VERBSLAB_CLASSROOM_ADMINS     Hub admins (default: none)
#   VERBSLAB_CLASSROOM_PASSWORD   the one password of the test authenticator (default verbslab)
#   VERBSLAB_CLASSROOM_BACKEND    sim|native for every learner (default sim: one machine's rxe
#                                 devices would be shared by all learners)
#   VERBSLAB_INSTRUCTOR_DB        the instructor store: a SQLite file, or a postgresql:// URL
#                                 (default <dir>/instructor.sqlite)
#
# The authenticator is DummyAuthenticator (any listed user, one shared password) and the
# spawner SimpleLocalProcessSpawner (every learner's server runs as the Hub's OS user, with
# HOME=<dir>/home/<name>): a training room or a demo, not a site with untrusted users. For
# those, and for many machines, see "Kubernetes" in app/classroom/README.md.
import os
import shutil

# traitlets runs this file with __file__ set to its path.
repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
env = os.environ.get


def names(var, default):
    return [n.strip() for n in env(var, default).split(",") if n.strip()]


state = os.path.abspath(os.path.expanduser(env("VERBSLAB_CLASSROOM_DIR", "~/.local/share/verbslab-classroom")))
os.makedirs(os.path.join(state, "home"), exist_ok=True)
node = shutil.which("node") or "node"
learners = names("VERBSLAB_CLASSROOM_LEARNERS", "alice,bob")
instructors = names("VERBSLAB_CLASSROOM_INSTRUCTORS", "teacher")
admins = names("VERBSLAB_CLASSROOM_ADMINS", "")
hub_port = int(env("VERBSLAB_CLASSROOM_HUB_PORT", "8081"))
instructor_port = int(env("VERBSLAB_INSTRUCTOR_PORT", "10101"))
instructor_url = f"http://127.0.0.1:{instructor_port}"

c = get_config()  # noqa: F821 (defined by traitlets)

# The Hub and its proxy: configurable-http-proxy from npm (Debian's fails to start under Node 20).
c.JupyterHub.ip = env("VERBSLAB_CLASSROOM_IP", "127.0.0.1")
c.JupyterHub.port = int(env("VERBSLAB_CLASSROOM_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = hub_port
c.ConfigurableHTTPProxy.command = [os.path.join(repo, "node_modules", ".bin", "configurable-http-proxy")]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{int(env('VERBSLAB_CLASSROOM_PROXY_API_PORT', '8001'))}"
c.ConfigurableHTTPProxy.pid_file = os.path.join(state, "proxy.pid")
c.JupyterHub.db_url = "sqlite:///" + os.path.join(state, "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = os.path.join(state, "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = os.path.join(state, "jupyterhub.pid")
c.JupyterHub.cleanup_servers = True
c.JupyterHub.default_url = "/hub/home"

# Who may log in: the listed learners, instructors and admins, with the one password.
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = env("VERBSLAB_CLASSROOM_PASSWORD", "verbslab")
c.Authenticator.allowed_users = set(learners + instructors + admins)
c.Authenticator.admin_users = set(admins)
c.JupyterHub.load_groups = {"instructors": instructors}

# Every learner's server: VerbsLab, in their own home, reporting to the instructor service.
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = os.path.join(state, "home", "{username}")
c.Spawner.cmd = [
    node,
    os.path.join(repo, "app", "cli", "verbslab.mjs"),
    "serve",
    "--jupyterhub",
    "--backend",
    env("VERBSLAB_CLASSROOM_BACKEND", "sim"),
]
c.Spawner.default_url = "/"
c.Spawner.environment = {
    "VERBSLAB_INSTRUCTOR_URL": instructor_url + "/services/instructor/",
    "JUPYTERHUB_ACTIVITY_INTERVAL": env("JUPYTERHUB_ACTIVITY_INTERVAL", "60"),
}
# Node, tsx and the backend process start in a few seconds; a loaded 2-core machine needs more.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120

# The instructor service, run by the Hub; only the `instructors` group and admins get in.
c.JupyterHub.services = [
    {
        "name": "instructor",
        "url": instructor_url,
        "command": [node, "--import", "tsx", os.path.join(repo, "app", "classroom", "instructor-main.ts")],
        "cwd": repo,
        "oauth_no_confirm": True,
        "environment": {
            "VERBSLAB_INSTRUCTOR_DB": env("VERBSLAB_INSTRUCTOR_DB", os.path.join(state, "instructor.sqlite")),
            "PATH": os.environ.get("PATH", ""),
        },
    }
]
c.JupyterHub.load_roles = [
    {
        "name": "instructor",
        "description": "Opens the VerbsLab instructor view",
        "groups": ["instructors"],
        "scopes": ["access:services!service=instructor"],
    },
]
