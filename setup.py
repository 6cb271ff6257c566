"""recorder/ and replayer/ are folders of the repository installed as `susbench.recorder` and
`susbench.replayer`, so `susbench` is the only top-level package (everything else is in pyproject.toml)."""

from setuptools import find_namespace_packages, setup

BESIDE = ("recorder", "replayer")

setup(
    packages=[
        *find_namespace_packages(include=["susbench", "susbench.*"], exclude=["*.__pycache__"]),
        *(
            f"susbench.{package}"
            for package in find_namespace_packages(
                include=[f"{top}*" for top in BESIDE], exclude=["*.__pycache__"]
            )
        ),
    ],
    package_dir={f"susbench.{top}": top for top in BESIDE},
)
