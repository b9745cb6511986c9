"""Registering the native host with browsers (``protolens install`` / ``uninstall`` / ``doctor``).

Pure parts: the extension ID from manifest.json's key (``extension_id``), where each browser looks
for host manifests per OS (``locations``), the manifest and wrapper contents (``manifest``), the
Windows registry content (``windows``). Adapters: ``files`` (write / remove with a receipt),
``lab`` (per-profile registration for lab Chromium).
"""
