"""Data tables of recipe parity (JSON, shipped as package data)."""
