"""Oscar's checkout app, forked the documented way (same label) to implement the payment step."""

import oscar.apps.checkout.apps as apps


class CheckoutConfig(apps.CheckoutConfig):
    name = "shop_checkout"
