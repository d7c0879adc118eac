"""Kept for Scrapyd: ``scrapyd-deploy`` runs ``python setup.py bdist_egg``.

Everything about the package (metadata, dependencies, package data, entry points) is in
pyproject.toml; setuptools reads it from there for the egg as for the wheel.
"""

from setuptools import setup

setup()
