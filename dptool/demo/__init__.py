"""The demo's data generators: an Olist-shaped e-commerce domain and a Berka-shaped bank (`dptool demo-data`).

May import: dptool.errors only.
"""
