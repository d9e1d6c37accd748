"""Synthetic demo datasets for dptool."""
