"""muninn's own redaction rules, registered through the hook an outside rule would use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from muninn.core.hookspecs import hookimpl


@hookimpl
def register_rules(register: Callable[[type], Any]) -> None:
    from muninn.guards.rules import (
        auth_header,
        aws,
        azure,
        expect_send,
        gcp,
        github,
        jwt,
        labelled,
        password_hash,
        private_key,
        prose_password,
        recovery_codes,
        shell_password,
        slack,
        stripe,
        table_credential,
        undeclared,
        url_credentials,
        vendor,
        webhook_url,
        yaml_block,
    )

    for rule in (auth_header.AuthHeader, aws.AwsKey, azure.AzureKey, gcp.GcpKey, github.GitHubToken, jwt.Jwt,
                 labelled.LabelledSecret, private_key.PrivateKey, prose_password.ProsePassword,
                 shell_password.ShellPassword, slack.SlackToken, stripe.StripeKey,
                 url_credentials.UrlCredentials, vendor.VendorToken, undeclared.UndeclaredSecret,
                 password_hash.PasswordHash, webhook_url.WebhookUrl, recovery_codes.RecoveryCodes,
                 expect_send.ExpectSend, yaml_block.YamlBlockSecret, table_credential.TableCredential):
        register(rule)
