"""Solitaire server."""
