//! `askpane-matrix login` and `logout`, and the client every other command restores from the
//! saved session: the SDK's SQLite stores (state and crypto) under the bridge's directory,
//! encrypted with the passphrase kept beside them.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use matrix_sdk::authentication::matrix::MatrixSession;
use matrix_sdk::config::SyncSettings;
use matrix_sdk::ruma::api::client::uiaa;
use matrix_sdk::ruma::api::error::ErrorKind;
use matrix_sdk::store::RoomLoadSettings;
use matrix_sdk::{Client, SessionMeta, SessionTokens};
use matrix_sdk_crypto::CollectStrategy;

use crate::state::{Dir, Session, write_json};

/// Where the secret comes from: never the command line.
pub enum Secret {
    Password(String),
    Token(String),
}

impl Secret {
    /// `--password-file`, `ASKPANE_MATRIX_PASSWORD`, `--token-file`, `ASKPANE_MATRIX_TOKEN`,
    /// in that order; exactly one must give something.
    pub fn find(password_file: Option<PathBuf>, token_file: Option<PathBuf>) -> Result<Secret> {
        let read = |file: PathBuf| -> Result<String> {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let text = text.trim_end_matches(['\n', '\r']).to_owned();
            if text.is_empty() {
                bail!("{} is empty", file.display());
            }
            Ok(text)
        };
        let env = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        match (password_file, token_file) {
            (Some(_), Some(_)) => bail!("give a password or a token, not both"),
            (Some(file), None) => Ok(Secret::Password(read(file)?)),
            (None, Some(file)) => Ok(Secret::Token(read(file)?)),
            (None, None) => match (env("ASKPANE_MATRIX_PASSWORD"), env("ASKPANE_MATRIX_TOKEN")) {
                (Some(password), None) => Ok(Secret::Password(password)),
                (None, Some(token)) => Ok(Secret::Token(token)),
                (Some(_), Some(_)) => bail!(
                    "both ASKPANE_MATRIX_PASSWORD and ASKPANE_MATRIX_TOKEN are set: unset one"
                ),
                (None, None) => bail!(
                    "no secret: give --password-file FILE or --token-file FILE, or set ASKPANE_MATRIX_PASSWORD or ASKPANE_MATRIX_TOKEN (never on the command line)"
                ),
            },
        }
    }
}

/// A client with the bridge's stores. Room keys go to the devices the SDK's recommended
/// strategy picks (MSC4153's identity-based sharing: devices their owner cross-signed).
async fn build(homeserver: &str, dir: &Dir) -> Result<Client> {
    let passphrase = dir.passphrase()?;
    dir.secure_store()?;
    let client = Client::builder()
        .homeserver_url(homeserver)
        .sqlite_store(dir.store_dir(), Some(&passphrase))
        .with_room_key_recipient_strategy(CollectStrategy::IdentityBasedStrategy)
        .build()
        .await
        .with_context(|| format!("cannot open the Matrix client for {homeserver}"))?;
    Ok(client)
}

/// Logs in and keeps the session; the device's first sync uploads its keys.
pub async fn login(
    dir: &Dir,
    homeserver: &str,
    user: &str,
    secret: Secret,
    device_name: &str,
) -> Result<()> {
    if dir.session_file().exists() {
        bail!(
            "already logged in ({}): run `askpane-matrix logout` first",
            dir.session_file().display()
        );
    }
    // A new device starts with a new store: the old one's keys are another device's.
    dir.forget()?;
    let session = match secret {
        Secret::Password(password) => {
            let client = build(homeserver, dir).await?;
            let response = client
                .matrix_auth()
                .login_username(user, &password)
                .initial_device_display_name(device_name)
                .await
                .map_err(|error| login_error(homeserver, error))?;
            let _ = response;
            let session =
                client.matrix_auth().session().context("the login returned no session")?;
            first_sync(&client).await?;
            cross_sign(&client, user, Some(&password)).await;
            session
        }
        Secret::Token(token) => {
            // Who the token is (its user and device), asked with a client that stores nothing.
            let probe = Client::builder()
                .homeserver_url(homeserver)
                .build()
                .await
                .with_context(|| format!("cannot reach {homeserver}"))?;
            let placeholder = MatrixSession {
                meta: SessionMeta {
                    user_id: user.try_into().context("not a Matrix user id")?,
                    device_id: "PROBE".into(),
                },
                tokens: SessionTokens { access_token: token.clone(), refresh_token: None },
            };
            probe.matrix_auth().restore_session(placeholder, RoomLoadSettings::default()).await?;
            let who = probe.whoami().await.map_err(|error| {
                login_error(homeserver, matrix_sdk::Error::Http(Box::new(error)))
            })?;
            if who.user_id.as_str() != user {
                bail!("the token is {}'s, not {user}'s", who.user_id);
            }
            let device_id =
                who.device_id.context("the homeserver names no device for this token")?;
            let session = MatrixSession {
                meta: SessionMeta { user_id: who.user_id, device_id },
                tokens: SessionTokens { access_token: token, refresh_token: None },
            };
            let client = build(homeserver, dir).await?;
            client
                .matrix_auth()
                .restore_session(session.clone(), RoomLoadSettings::default())
                .await?;
            first_sync(&client).await?;
            cross_sign(&client, user, None).await;
            session
        }
    };
    write_json(&dir.session_file(), &Session { homeserver: homeserver.to_owned(), session })?;
    dir.secure_store()?;
    Ok(())
}

async fn first_sync(client: &Client) -> Result<()> {
    client.sync_once(SyncSettings::default()).await.context("the first sync failed")?;
    Ok(())
}

/// Cross-signs the new device (its own identity signs it), so that clients that share keys only
/// with devices their owner signed (MSC4153, the SDK's recommended strategy, Element's "exclude
/// insecure devices") send it theirs. The homeserver may ask for the password again (UIA).
async fn cross_sign(client: &Client, user: &str, password: Option<&str>) {
    let first = client.encryption().bootstrap_cross_signing_if_needed(None).await;
    let outcome = match (first, password) {
        (Ok(()), _) => Ok(()),
        (Err(error), Some(password)) => match error.as_uiaa_response() {
            Some(response) => {
                let mut auth = uiaa::Password::new(
                    uiaa::UserIdentifier::Matrix(uiaa::MatrixUserIdentifier::new(user.to_owned())),
                    password.to_owned(),
                );
                auth.session = response.session.clone();
                client
                    .encryption()
                    .bootstrap_cross_signing(Some(uiaa::AuthData::Password(auth)))
                    .await
            }
            None => Err(error),
        },
        (Err(error), None) => Err(error),
    };
    if let Err(error) = outcome {
        crate::bridge::log(&format!(
            "the device is not cross-signed ({error}): members whose clients exclude unverified devices will not send it keys; verify it from another session of {user}"
        ));
    }
}

fn login_error(homeserver: &str, error: matrix_sdk::Error) -> anyhow::Error {
    match error.client_api_error_kind() {
        Some(ErrorKind::Forbidden) => {
            anyhow::anyhow!("{homeserver} refused the login: wrong user or password")
        }
        Some(ErrorKind::UnknownToken { .. }) => {
            anyhow::anyhow!("{homeserver} does not know this access token")
        }
        Some(_) => anyhow::anyhow!("{homeserver} refused the login: {error}"),
        None => anyhow::anyhow!("cannot reach {homeserver}: {error}"),
    }
}

/// The client of the saved session.
pub async fn restore(dir: &Dir) -> Result<Client> {
    let saved = dir.session()?;
    let client = build(&saved.homeserver, dir).await?;
    client
        .matrix_auth()
        .restore_session(saved.session, RoomLoadSettings::default())
        .await
        .context("cannot restore the saved session")?;
    Ok(client)
}

/// Ends the session on the homeserver and removes the local files. A homeserver that cannot be
/// reached leaves the files in place (the session would stay valid there): say so.
pub async fn logout(dir: &Dir) -> Result<()> {
    let saved = dir.session()?;
    let client = restore(dir).await?;
    match client.matrix_auth().logout().await {
        Ok(_) => {}
        Err(error)
            if error
                .client_api_error_kind()
                .is_some_and(|kind| matches!(kind, ErrorKind::UnknownToken { .. })) =>
        {
            // Already ended on the server (the token was revoked): the local files still go.
        }
        Err(error) => bail!(
            "cannot end the session on {}: {error}; the local session is kept so you can try again",
            saved.homeserver
        ),
    }
    drop(client);
    dir.forget()?;
    Ok(())
}
