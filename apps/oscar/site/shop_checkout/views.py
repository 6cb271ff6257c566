"""The payment step oscar leaves to each shop: a card form, then the preview, then a card payment
source recorded on the order. No card is charged anywhere: this shop is a test site.

The card form posts back to the payment page, which keeps the cardholder's name and the card's last
four digits in the session and redirects to the preview (post/redirect/get), so every page of the
checkout is reached by a GET a recording can replay and a visitor can reload.
"""

from django import forms
from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from oscar.apps.checkout import exceptions, views
from oscar.apps.checkout.views import *  # noqa: F403 (a fork keeps every other checkout view)
from oscar.apps.payment.models import Source, SourceType

CARD = "fernhill_card"


class CardForm(forms.Form):
    name = forms.CharField(label="Name on card", max_length=80)
    number = forms.RegexField(label="Card number", regex=r"^[0-9 ]{12,23}$", max_length=23)
    expiry = forms.RegexField(label="Expiry (MM/YY)", regex=r"^(0[1-9]|1[0-2])/[0-9]{2}$", max_length=5)
    cvc = forms.RegexField(label="Security code", regex=r"^[0-9]{3,4}$", max_length=4)


class PaymentDetailsView(views.PaymentDetailsView):
    template_name = "fernhill/payment_details.html"
    template_name_preview = "fernhill/preview.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.setdefault("card_form", CardForm())
        context["card"] = self.request.session.get(CARD)
        return context

    def check_payment_data_is_captured(self, request):
        if not request.session.get(CARD):
            raise exceptions.FailedPreCondition(
                url=reverse("checkout:payment-details"), message="Please enter your card details"
            )

    def post(self, request, *args, **kwargs):
        if self.preview:
            return super().post(request, *args, **kwargs)
        form = CardForm(request.POST)
        if not form.is_valid():
            return self.render_payment_details(request, card_form=form)
        digits = form.cleaned_data["number"].replace(" ", "")
        request.session[CARD] = {"name": form.cleaned_data["name"], "last4": digits[-4:]}
        return redirect("checkout:preview")

    def handle_place_order_submission(self, request):
        if not request.session.get(CARD):
            messages.error(request, "Please enter your card details")
            return redirect("checkout:payment-details")
        submission = self.build_submission()
        submission["payment_kwargs"]["card"] = request.session[CARD]
        return self.submit(**submission)

    def handle_payment(self, order_number, total, **kwargs):
        card = kwargs["card"]
        source_type, _ = SourceType.objects.get_or_create(name="Card")
        self.add_payment_source(
            Source(
                source_type=source_type,
                currency=total.currency,
                amount_allocated=total.incl_tax,
                amount_debited=total.incl_tax,
                label=f"card ending {card['last4']}",
            )
        )
        self.add_payment_event("Settled", total.incl_tax, reference=order_number)
