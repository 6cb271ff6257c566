"""The payment step oscar leaves to each shop: a card form, shown again on the preview, then a
card payment source recorded on the order. No card is charged anywhere: this shop is a test site."""

from django import forms
from oscar.apps.checkout import views
from oscar.apps.checkout.views import *  # noqa: F403 (a fork keeps every other checkout view)
from oscar.apps.payment.models import Source, SourceType


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
        return context

    def handle_payment_details_submission(self, request):
        form = CardForm(request.POST)
        if form.is_valid():
            return self.render_preview(request, card_form=form)
        return self.render_payment_details(request, card_form=form)

    def handle_place_order_submission(self, request):
        form = CardForm(request.POST)
        if not form.is_valid():
            return self.render_payment_details(request, card_form=form)
        submission = self.build_submission()
        submission["payment_kwargs"]["card"] = form.cleaned_data
        return self.submit(**submission)

    def handle_payment(self, order_number, total, **kwargs):
        card = kwargs["card"]
        source_type, _ = SourceType.objects.get_or_create(name="Card")
        digits = card["number"].replace(" ", "")
        self.add_payment_source(
            Source(
                source_type=source_type,
                currency=total.currency,
                amount_allocated=total.incl_tax,
                amount_debited=total.incl_tax,
                label=f"card ending {digits[-4:]}",
            )
        )
        self.add_payment_event("Settled", total.incl_tax, reference=order_number)
