"""Estimated cost of a model call from the price table (`prices.yaml`, data) or a configured price."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, RootModel

from susbench.core.loading import read_data_file
from susbench.core.models import Frozen
from susbench.core.urlpattern import glob_matches

PRICES_FILE = Path(__file__).with_name("prices.yaml")
PER = 1_000_000


class Price(Frozen):
    """USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class PricedModel(Price):
    model: str = Field(description="glob over model names")


class PriceTable(RootModel[tuple[PricedModel, ...]]):
    def price(self, model: str) -> Price | None:
        for row in self.root:
            if glob_matches(row.model, model):
                return Price(input=row.input, output=row.output)
        return None


def load_prices(path: Path = PRICES_FILE) -> PriceTable:
    return PriceTable.model_validate(read_data_file(path))


def cost_usd(price: Price | None, tokens_in: int, tokens_out: int) -> float | None:
    if price is None:
        return None
    return round((tokens_in * price.input + tokens_out * price.output) / PER, 8)
