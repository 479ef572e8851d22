"""Rendering: terminal tables, markdown reports. No simulation logic lives here."""
