# env.sh: the environment the workshop's Jupyter runs in. Source it (bash):
#   source scripts/env.sh
# It puts .venv/bin first on PATH and keeps every Jupyter and IPython file
# (kernelspecs, runtime files, trust database, lab settings and workspaces)
# inside .venv, so nothing is written to the user's home except Go's caches,
# and adds the workshop's Jupyter configuration (jupyter/: only the Go kernel,
# assets/ hidden, no news or update checks).
# shellcheck shell=bash

WORKSHOP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORKSHOP_VENV="$WORKSHOP_ROOT/.venv"
export WORKSHOP_ROOT WORKSHOP_VENV
export PATH="$WORKSHOP_VENV/bin:$PATH"
export JUPYTER_DATA_DIR="$WORKSHOP_VENV/share/jupyter"
export JUPYTER_CONFIG_DIR="$WORKSHOP_VENV/etc/jupyter"
export JUPYTER_CONFIG_PATH="$WORKSHOP_ROOT/jupyter"
export JUPYTER_RUNTIME_DIR="$WORKSHOP_VENV/share/jupyter/runtime"
export JUPYTERLAB_SETTINGS_DIR="$WORKSHOP_VENV/share/jupyter/lab/user-settings"
export JUPYTERLAB_WORKSPACES_DIR="$WORKSHOP_VENV/share/jupyter/lab/workspaces"
export IPYTHONDIR="$WORKSHOP_VENV/share/ipython"
# DynamoDB Local accepts any static credentials; the SDK needs some and a region.
export AWS_ACCESS_KEY_ID="${AWS_ACCESS_KEY_ID:-local}"
export AWS_SECRET_ACCESS_KEY="${AWS_SECRET_ACCESS_KEY:-local}"
export AWS_REGION="${AWS_REGION:-us-east-1}"
# GoNB runs `go get` before every cell, which asks the module proxy for the
# version list of every dependency (about 30 requests, 1 s a cell here).
# Answering from the module cache first makes that 0.04 s and lets the
# workshop run offline; modules not in the cache still come from the proxy.
if command -v go >/dev/null; then
  _modcache_proxy="file://$(go env GOMODCACHE)/cache/download"
  case ",$(go env GOPROXY)," in
    *",$_modcache_proxy,"*) ;;
    *) GOPROXY="$_modcache_proxy,$(go env GOPROXY)"; export GOPROXY ;;
  esac
  unset _modcache_proxy
fi
